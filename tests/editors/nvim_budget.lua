-- Real-Neovim test of the collection-budget lens (issue #22), run by run_dynamic_test.sh against
-- a real perfhat-handler holding the service's budget status (budget_status.json, POSTed to
-- /v1/budget as libperfhat sends it): the "always trace" lens on Catalog::audit with its stack
-- samples' estimate, run from the editor; the new plan and its predicted overhead are shown at
-- once, and the pin reaches the pins file the library re-reads.
-- Prints one PASS/FAIL line per check and exits non-zero on the first failure.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/nvim_harness.lua')
local server = H.env('PERFHAT_TEST_SERVER')
local ws = H.env('PERFHAT_TEST_WORKSPACE')
local handler = H.env('PERFHAT_TEST_HANDLER')
local pins = H.env('PERFHAT_TEST_PINS')
local messages = {}
local t = H.new({
  timeout_ms = 30000,
  dump = function(t)
    t.dump_lenses()
    for _, m in ipairs(messages) do
      H.out('message: ' .. m)
    end
  end,
})
local out, fail, pass, wait_for, find_line = H.out, t.fail, t.pass, t.wait_for, t.find_line

local perfhat = require('perfhat')
local bufnr

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
  t.open(ws .. '/src/catalog.cc')
  bufnr = t.bufnr

  -- 1. The budget lens over audit(), from the handler's status: its class is covered by stack
  --    samples, with their estimate, and the action.
  local audit_line = find_line('void Catalog::audit(int id) const')
  local title = t.wait_for_lens('the collection-budget lens over Catalog::audit', audit_line, 'always trace')
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

t.run(main)
