// A real third-party OTLP client: the OpenTelemetry JS SDK exports spans carrying code.*
// attributes to a perfhat handler, over OTLP/HTTP JSON or protobuf (the official exporters).
//
//   node export.js --url http://127.0.0.1:PORT --token T --protocol json|proto --count N
//
// Span i of `js::Checkout::run(int)` lasts (i+1) ms and has one child `js::Db::query` lasting
// (i+1)/2 ms, so the test knows the exact latencies. Exit 0 only when the export succeeded.
'use strict';
const { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } =
  require('@opentelemetry/sdk-trace-base');
const { Resource } = require('@opentelemetry/resources');
const { context, trace } = require('@opentelemetry/api');

function arg(name, fallback) {
  const i = process.argv.indexOf(`--${name}`);
  return i >= 0 && i + 1 < process.argv.length ? process.argv[i + 1] : fallback;
}

const url = arg('url');
const token = arg('token', '');
const protocol = arg('protocol', 'json');
const count = parseInt(arg('count', '100'), 10);
if (!url || !['json', 'proto'].includes(protocol) || !(count > 0)) {
  console.error('usage: node export.js --url URL [--token T] --protocol json|proto --count N');
  process.exit(2);
}

const { OTLPTraceExporter } = protocol === 'json'
  ? require('@opentelemetry/exporter-trace-otlp-http')
  : require('@opentelemetry/exporter-trace-otlp-proto');

const memory = new InMemorySpanExporter();
const provider = new BasicTracerProvider({
  resource: new Resource({
    'service.name': `js-shop-${protocol}`,
    'service.version': '3.1.0',
    'host.name': 'js-host',
  }),
});
provider.addSpanProcessor(new SimpleSpanProcessor(memory));
const tracer = provider.getTracer('perfhat-otel-js-test', '0.1.0');

const base = Date.now() - 60_000;  // a minute ago: inside the handler's default window
const hr = (ms) => [Math.floor(ms / 1000), Math.round((ms % 1000) * 1e6)];
for (let i = 0; i < count; i++) {
  const start = base + i;
  const parent = tracer.startSpan('checkout', {
    startTime: hr(start),
    attributes: {
      'code.function.name': 'js::Checkout::run',
      'code.function.signature': 'js::Checkout::run(int)',
      'code.file.path': '/src/checkout.cc',
      'code.line.number': 12,
      'perfhat.input.size': 4,
    },
  });
  const ctx = trace.setSpan(context.active(), parent);
  const child = tracer.startSpan('query', {
    startTime: hr(start),
    attributes: { 'code.function': 'query', 'code.namespace': 'js::Db', 'code.lineno': 40 },
  }, ctx);
  child.end(hr(start + (i + 1) / 2));
  parent.end(hr(start + (i + 1)));
}

const exporter = new OTLPTraceExporter({
  url: `${url}/v1/traces`,
  headers: token ? { Authorization: `Bearer ${token}` } : {},
  timeoutMillis: 10000,
});
exporter.export(memory.getFinishedSpans(), (result) => {
  if (result.code !== 0) {
    console.error(`export failed: ${result.error && result.error.message}`);
    process.exit(1);
  }
  console.log(`exported ${memory.getFinishedSpans().length} spans via ${protocol}`);
  exporter.shutdown().then(() => process.exit(0));
});
