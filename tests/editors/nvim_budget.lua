-- Real-Neovim test of the collection-budget lens (issue #22), run by run_dynamic_test.sh against
-- a real perfhat-handler holding the service's budget status (budget_status.json, POSTed to
-- /v1/budget as libperfhat sends it): the "always trace" lens on Catalog::audit with its stack
-- samples' estimate, run from the editor; the new plan and its predicted overhead are shown at
-- once, and the pin reaches the pins file the library re-reads.
-- Prints one PASS/FAIL line per check and exits non-zero on the first failure.
local server = assert(os.getenv('PERFHAT_TEST_SERVER'), 'PERFHAT_TEST_SERVER not set')
local ws = assert(os.getenv('PERFHAT_TEST_WORKSPACE'), 'PERFHAT_TEST_WORKSPACE not set')
local handler = assert(os.getenv('PERFHAT_TEST_HANDLER'), 'PERFHAT_TEST_HANDLER not set')
local pins = assert(os.getenv('PERFHAT_TEST_PINS'), 'PERFHAT_TEST_PINS not set')
local timeout = tonumber(os.getenv('PERFHAT_TEST_TIMEOUT_MS') or '30000')

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

local perfhat = require('perfhat')
local bufnr
local messages = {}

local function fail(msg)
  out('FAIL: ' .. msg)
  if bufnr then
    for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
      out(('lens line %d: %s'):format(l.range.start.line + 1, l.command and l.command.title or '?'))
    end
  end
  for _, m in ipairs(messages) do
    out('message: ' .. m)
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
      return i - 1
    end
  end
  fail('sample file has no line containing ' .. pattern)
end

local function main()
  vim.lsp.set_log_level('warn')
  -- What the user is shown: window/showMessage (and the editor's own notices).
  local show = vim.lsp.handlers['window/showMessage']
  vim.lsp.handlers['window/showMessage'] = function(err, result, ctx, config)
    table.insert(messages, result.message)
    return show(err, result, ctx, config)
  end
  vim.notify = function(msg)
    table.insert(messages, msg)
  end
  -- Several lenses on one line: codelens.run asks which; take the budget's.
  vim.ui.select = function(items, opts, on_choice)
    for i, item in ipairs(items) do
      if opts.format_item(item):find('always trace', 1, true) then
        return on_choice(item, i)
      end
    end
    on_choice(nil, nil)
  end
  perfhat.setup({
    cmd = { server, '--handler', handler },
    settings = { budgetService = 'shop', budgetPins = pins },
  })
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/catalog.cc'))
  bufnr = vim.api.nvim_get_current_buf()
  wait_for('perfhat-lsp to start', function()
    local c = perfhat.client(bufnr)
    return c ~= nil and c.initialized == true
  end)

  -- 1. The budget lens over audit(), from the handler's status: its class is covered by stack
  --    samples, with their estimate, and the action.
  local audit_line = find_line('void Catalog::audit(int id) const')
  local title
  wait_for('the collection-budget lens over Catalog::audit', function()
    for _, l in ipairs(vim.lsp.codelens.get(bufnr)) do
      if l.range.start.line == audit_line and l.command and l.command.title:find('always trace', 1, true) then
        title = l.command.title
        return true
      end
    end
    vim.lsp.codelens.refresh()
    return false
  end)
  for _, needle in ipairs({ 'shop::Catalog sampled at 0 %', '≈ 20 ms CPU/s estimated from stack samples' }) do
    if not title:find(needle, 1, true) then
      fail(('lens lacks %q: %s'):format(needle, title))
    end
  end
  pass('budget lens: ' .. title)

  -- 2. Run it from the editor, as a user would: the new plan and its predicted overhead at once.
  vim.api.nvim_win_set_cursor(0, { audit_line + 1, 0 })
  vim.lsp.codelens.run()
  local shown
  wait_for('the new plan in a message', function()
    for _, m in ipairs(messages) do
      if m:find('Always trace shop::Catalog::audit', 1, true) then
        shown = m
        return true
      end
    end
    return false
  end)
  for _, needle in ipairs({ 'predicted collector overhead 0.04 % → ', 'shop::Catalog: sampled at 0 % → always traced' }) do
    if not shown:find(needle, 1, true) then
      fail(('message lacks %q: %s'):format(needle, shown))
    end
  end
  pass('new plan shown: ' .. shown)

  -- 3. The pin reached the pins file the library re-reads.
  local text = ''
  wait_for('the pins file', function()
    local f = io.open(pins, 'r')
    text = f and f:read('*a') or ''
    if f then
      f:close()
    end
    return text:find('always shop::Catalog::audit\n', 1, true) ~= nil
  end)
  pass('pin written to ' .. pins)
  out('ALL PASSED')
  vim.cmd('qa!')
end

local ran, err = xpcall(main, debug.traceback)
if not ran then
  fail('error in the check: ' .. tostring(err))
end
