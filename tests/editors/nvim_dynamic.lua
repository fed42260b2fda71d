-- Real-Neovim test of production's call graph (issue #24), run by run_dynamic_test.sh against a
-- real perfhat-handler seeded by dynamic_handler.sh: the call-graph code lens over
-- Catalog::price, the hover on its name listing its caller with the call count, the
-- never-called diagnostic on Catalog::audit, and perfhat.showCallGraph writing the graph.
-- Prints one PASS/FAIL line per check and exits non-zero on the first failure.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/nvim_harness.lua')
local server = H.env('PERFHAT_TEST_SERVER')
local ws = H.env('PERFHAT_TEST_WORKSPACE')
local handler = H.env('PERFHAT_TEST_HANDLER')
local t = H.new({
  timeout_ms = 60000,
  dump = function(t)
    t.dump_diagnostics()
    t.dump_lenses()
  end,
})
local out, fail, pass, wait_for, find_line = H.out, t.fail, t.pass, t.wait_for, t.find_line
local timeout = t.timeout

local perfhat = require('perfhat')
local bufnr

local function main()
  vim.lsp.set_log_level('warn')
  perfhat.setup({ cmd = { server, '--handler', handler } })
  t.open(ws .. '/src/catalog.cc')
  bufnr = t.bufnr

  -- 1. The call-graph lens over price(): calls per hour, self p50, demand rank, fan-in/out.
  local price_line, price_text = find_line('double Catalog::price(int id) const')
  local title = t.wait_for_lens('the call-graph lens over Catalog::price', price_line, 'calls/h')
  for _, needle in ipairs({ 'self p50 1.2 ms', 'demand #1', '1 caller / 0 callees' }) do
    if not title:find(needle, 1, true) then
      fail(('lens lacks %q: %s'):format(needle, title))
    end
  end
  pass('call-graph lens: ' .. title)

  -- 2. Hover on the function's name: its caller with the call count.
  vim.api.nvim_win_set_cursor(0, { price_line + 1, (price_text:find('price', 1, true)) })
  local hover = t.hover({ 'Callers', 'shop::OrderService::total(const shop::Order &) const', '180 calls' })
  pass('hover lists the caller with its count (' .. #vim.split(hover, '\n') .. ' lines)')

  -- 3. Never called in the window: an Information diagnostic on audit(), none on price().
  local audit_line = find_line('void Catalog::audit(int id) const')
  wait_for('the never-called diagnostic on audit()', function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.lnum == audit_line and d.message:find('Not called in production', 1, true) then
        return d.severity == vim.diagnostic.severity.INFO
      end
    end
    return false
  end)
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.lnum == price_line and d.message:find('Not called', 1, true) then
      fail('price() is called but marked never-called')
    end
  end
  pass('never-called diagnostic on audit()')

  -- 4. The command behind the lens: the graph as SVG (Graphviz) or dot text, in a file.
  local client = perfhat.client(bufnr)
  local result = client.request_sync('workspace/executeCommand', {
    command = 'perfhat.showCallGraph',
    arguments = { 'shop::Catalog::price(int) const' },
  }, timeout, bufnr)
  if not result or result.err or not result.result then
    fail('perfhat.showCallGraph failed: ' .. vim.inspect(result))
  end
  local f = io.open(result.result.path, 'r')
  local text = f and f:read('*a') or ''
  if f then
    f:close()
  end
  if not (text:find('<svg', 1, true) or text:find('digraph', 1, true)) or not text:find('OrderService', 1, true) then
    fail('call graph file is not a graph of price(): ' .. result.result.path)
  end
  pass(('call graph written as %s: %s'):format(result.result.format, result.result.path))
  out('ALL PASSED')
  vim.cmd('qa!')
end

t.run(main)
