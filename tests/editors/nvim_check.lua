-- Real-Neovim test of the perfhat plugin, run by run_nvim_test.sh:
--   nvim --headless --clean --cmd 'set rtp^=editors/neovim' -c 'luafile tests/editors/nvim_check.lua'
-- Opens the sample workspace's catalog.cc with only the plugin loaded, waits for perfhat-lsp,
-- and asserts what Neovim actually draws: end-of-line hints (extmarks), the hover window's text,
-- code lenses, and a regression diagnostic after an edit that adds a slow call inside the loops.
-- Prints one "PASS"/"FAIL" verdict line per check and exits non-zero on the first failure.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/nvim_harness.lua')
local server = H.env('PERFHAT_TEST_SERVER')
local ws = H.env('PERFHAT_TEST_WORKSPACE')
local out = H.out

local perfhat = require('perfhat')
local hints = require('perfhat.hints')

local function eol_texts(bufnr)
  -- Every end-of-line virtual text chunk in every namespace, by 0-based line.
  local by_line = {}
  for _, ns in pairs(vim.api.nvim_get_namespaces()) do
    for _, m in ipairs(vim.api.nvim_buf_get_extmarks(bufnr, ns, 0, -1, { details = true })) do
      local d = m[4] or {}
      if d.virt_text then
        local parts = {}
        for _, chunk in ipairs(d.virt_text) do
          parts[#parts + 1] = chunk[1]
        end
        by_line[m[2]] = (by_line[m[2]] or '') .. table.concat(parts)
      end
    end
  end
  return by_line
end

local function dump_state(bufnr)
  out('--- buffer with end-of-line virtual text:')
  local texts = eol_texts(bufnr)
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    out(('%3d | %s%s'):format(i, line, texts[i - 1] and ('    <<' .. texts[i - 1] .. '>>') or ''))
  end
  out('--- diagnostics:')
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    out(('line %d [%s] %s'):format(d.lnum + 1, tostring(d.severity), d.message))
  end
  out('--- lsp log: ' .. vim.lsp.get_log_path())
end

local t = H.new({
  timeout_ms = 60000,
  dump = function(t)
    if t.bufnr then
      dump_state(t.bufnr)
    end
  end,
})
local fail, pass, wait_for, find_line = t.fail, t.pass, t.wait_for, t.find_line
local bufnr

local function main()
vim.lsp.set_log_level('warn')
local okay, e = pcall(perfhat.setup, {
  cmd = { server, '--feedback-file', ws .. '/feedback.json' },
  hint_debounce_ms = 100,
})
if not okay then
  fail('setup failed: ' .. tostring(e))
end

t.open(ws .. '/src/catalog.cc', 'perfhat-lsp to start and initialize')
bufnr = t.bufnr
local client = perfhat.client(bufnr)
pass(('perfhat-lsp running (client %d, root %s)'):format(client.id, client.config.root_dir))

-- 1. Inlay hints as end-of-line virtual text: the call inside the loops shows the callee's
--    measured p50, the inner loop header shows iterations × body.
local call_line = find_line('catalog_.price(item.id)')
local inner_loop = find_line('for (const Item &item')
wait_for('inlay hints on the call and loop lines', function()
  local eol = eol_texts(bufnr)
  return eol[call_line] ~= nil and eol[call_line]:find('⏱', 1, true) ~= nil
    and eol[inner_loop] ~= nil and eol[inner_loop]:find('≈', 1, true) ~= nil
end)
local texts = eol_texts(bufnr)
if not texts[call_line]:find('1.2 ms', 1, true) then
  fail('hint on the price() call does not show its p50 1.2 ms: ' .. texts[call_line])
end
if not texts[inner_loop]:find('5 ×', 1, true) then
  fail('inner loop hint does not show 5 iterations: ' .. texts[inner_loop])
end
if hints.native then
  pass('native inlay hints enabled')
else
  local mine = vim.api.nvim_buf_get_extmarks(bufnr, hints.ns, 0, -1, {})
  if #mine == 0 then
    fail('hints did not come from the plugin namespace')
  end
end
pass('hint on price() call: ' .. vim.trim(texts[call_line]))
pass('hint on inner loop: ' .. vim.trim(texts[inner_loop]))

-- 2. Hover: put the cursor on `price` and open the real hover window.
local _, call_text = find_line('catalog_.price(item.id)')
vim.api.nvim_win_set_cursor(0, { call_line + 1, (call_text:find('price', 1, true)) })
local hover = t.hover({ 'p50', 'p99', '1.2 ms', '4 ms' })
pass('hover shows the statistics (' .. #vim.split(hover, '\n') .. ' lines)')
for _, win in ipairs(vim.api.nvim_list_wins()) do
  if vim.api.nvim_win_get_config(win).relative ~= '' then
    vim.api.nvim_win_close(win, true)
  end
end

-- 2b. :PerfhatShowData with the cursor on the call: the server's raw item in a scratch buffer.
vim.cmd('PerfhatShowData')
local data_win
wait_for('the :PerfhatShowData scratch buffer', function()
  for _, win in ipairs(vim.api.nvim_list_wins()) do
    local name = vim.api.nvim_buf_get_name(vim.api.nvim_win_get_buf(win))
    if name:find('perfhat://', 1, true) then
      data_win = win
      return true
    end
  end
  return false
end)
local data = table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(data_win), 0, -1, false), '\n')
if not (data:find('shop::Catalog::price(int) const', 1, true) and data:find('12000', 1, true)) then
  fail('raw data buffer lacks the key or the count:\n' .. data)
end
pass(':PerfhatShowData shows the raw item (' .. #vim.split(data, '\n') .. ' lines)')
vim.api.nvim_win_close(data_win, true)
vim.api.nvim_set_current_buf(bufnr)

-- 3. Code lenses over the functions with production data.
t.wait_for_lens('code lenses', nil, 'p50')
pass('code lenses: ' .. #vim.lsp.codelens.get(bufnr))

-- 4. Edit: add a slow call inside the two nested loops (like a real keystroke-level change,
--    sent as didChange); expect a regression warning and a hint on the new call.
local indent = call_text:match('^(%s*)')
vim.api.nvim_buf_set_lines(bufnr, call_line + 1, call_line + 1, false,
  { indent .. 'catalog_.audit(item.id);' })
local audit_line = call_line + 1
wait_for('a regression warning after the edit', function()
  for _, d in ipairs(vim.diagnostic.get(bufnr)) do
    if d.severity == vim.diagnostic.severity.WARN then
      return true
    end
  end
  return false
end)
local warning
for _, d in ipairs(vim.diagnostic.get(bufnr)) do
  if d.severity == vim.diagnostic.severity.WARN then
    warning = d
  end
end
if not (warning.message:find('audit', 1, true) or warning.lnum == audit_line) then
  fail('warning neither names audit() nor sits on the new line: line ' .. (warning.lnum + 1)
    .. ': ' .. warning.message)
end
pass(('diagnostic after edit (line %d): %s'):format(warning.lnum + 1, warning.message))
-- audit() has production data only from another caller: its cost here is predicted ('~').
wait_for('a predicted hint on the new audit() call', function()
  local eol = eol_texts(bufnr)
  return eol[audit_line] ~= nil and eol[audit_line]:find('~', 1, true) ~= nil
    and eol[audit_line]:find('ms', 1, true) ~= nil
end)
pass('hint on new audit() call: ' .. vim.trim(eol_texts(bufnr)[audit_line]))

-- 5. :checkhealth perfhat reports the running server without errors.
vim.cmd('checkhealth perfhat')
local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
if not report:find('client %d+ running') or report:find('ERROR') then
  fail('checkhealth report:\n' .. report)
end
pass('checkhealth perfhat')

out('ALL PASSED')
vim.cmd('qa!')
end

t.run(main)
