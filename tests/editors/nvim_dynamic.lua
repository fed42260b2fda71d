-- Real-Neovim test of production's call graph (issue #24), run by run_dynamic_test.sh against a
-- real perfhat-handler seeded by dynamic_handler.sh: the call-graph code lens over
-- Catalog::price, the hover on its name listing its caller with the call count, the
-- never-called diagnostic on Catalog::audit, and perfhat.showCallGraph writing the graph.
-- Prints one PASS/FAIL line per check and exits non-zero on the first failure.
local server = assert(os.getenv('PERFHAT_TEST_SERVER'), 'PERFHAT_TEST_SERVER not set')
local ws = assert(os.getenv('PERFHAT_TEST_WORKSPACE'), 'PERFHAT_TEST_WORKSPACE not set')
local handler = assert(os.getenv('PERFHAT_TEST_HANDLER'), 'PERFHAT_TEST_HANDLER not set')
local timeout = tonumber(os.getenv('PERFHAT_TEST_TIMEOUT_MS') or '60000')

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

local perfhat = require('perfhat')
local bufnr

local function fail(msg)
  out('FAIL: ' .. msg)
  if bufnr then
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      out(('diagnostic line %d [%s] %s'):format(d.lnum + 1, tostring(d.severity), d.message))
    end
    for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
      out(('lens line %d: %s'):format(l.range.start.line + 1, l.command and l.command.title or '?'))
    end
  end
  vim.cmd('cquit 1')
end

local function pass(msg)
  out('PASS: ' .. msg)
end

local function wait_for(what, predicate)
  if not vim.wait(timeout, predicate, 100) then
    fail('timed out after ' .. timeout .. ' ms waiting for ' .. what)
  end
end

local function find_line(pattern)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find(pattern, 1, true) then
      return i - 1, line
    end
  end
  fail('sample file has no line containing ' .. pattern)
end

local function main()
  vim.lsp.set_log_level('warn')
  perfhat.setup({ cmd = { server, '--handler', handler } })
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/catalog.cc'))
  bufnr = vim.api.nvim_get_current_buf()
  wait_for('perfhat-lsp to start', function()
    local c = perfhat.client(bufnr)
    return c ~= nil and c.initialized == true
  end)

  -- 1. The call-graph lens over price(): calls per hour, self p50, demand rank, fan-in/out.
  local price_line, price_text = find_line('double Catalog::price(int id) const')
  local title
  wait_for('the call-graph lens over Catalog::price', function()
    for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
      if l.range.start.line == price_line and l.command and l.command.title:find('calls/h', 1, true) then
        title = l.command.title
        return true
      end
    end
    vim.lsp.codelens.refresh()
    return false
  end)
  for _, needle in ipairs({ 'self p50 1.2 ms', 'demand #1', '1 caller / 0 callees' }) do
    if not title:find(needle, 1, true) then
      fail(('lens lacks %q: %s'):format(needle, title))
    end
  end
  pass('call-graph lens: ' .. title)

  -- 2. Hover on the function's name: its caller with the call count.
  vim.api.nvim_win_set_cursor(0, { price_line + 1, (price_text:find('price', 1, true)) })
  local function hover_text()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
      end
    end
  end
  vim.lsp.buf.hover()
  wait_for('the hover window', function()
    return hover_text() ~= nil
  end)
  local hover = hover_text()
  for _, needle in ipairs({ 'Callers', 'shop::OrderService::total(const shop::Order &) const', '180 calls' }) do
    if not hover:find(needle, 1, true) then
      fail(('hover lacks %q:\n%s'):format(needle, hover))
    end
  end
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

local ran, err = xpcall(main, debug.traceback)
if not ran then
  fail('error in the check: ' .. tostring(err))
end
