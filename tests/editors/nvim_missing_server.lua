-- Neovim with perfhat pointed at a server binary that does not exist: one clear error that says
-- how to fix it, no client, the buffer still usable, and :checkhealth perfhat reporting it.
-- Run by run_nvim_test.sh (PERFHAT_TEST_WORKSPACE set).
local ws = assert(os.getenv('PERFHAT_TEST_WORKSPACE'), 'PERFHAT_TEST_WORKSPACE not set')

local function out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end
local function fail(msg)
  out('FAIL: ' .. msg)
  vim.cmd('cquit 1')
end

local function main()
  local messages = {}
  vim.notify = function(msg, level)
    messages[#messages + 1] = { msg = msg, level = level }
  end
  local missing = ws .. '/no/such/perfhat-lsp'
  require('perfhat').setup{ cmd = { missing } }
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/catalog.cc'))
  vim.cmd('edit ' .. vim.fn.fnameescape(ws .. '/src/catalog.cc')) -- reopening must not repeat it
  local errors = vim.tbl_filter(function(m)
    return m.level == vim.log.levels.ERROR
  end, messages)
  if #errors ~= 1 then
    fail(('expected exactly one error, got %d: %s'):format(#errors, vim.inspect(messages)))
  end
  for _, needle in ipairs({ missing, 'not found', 'cmake --build build --target perfhat-lsp' }) do
    if not errors[1].msg:find(needle, 1, true) then
      fail(('error lacks %q: %s'):format(needle, errors[1].msg))
    end
  end
  out('PASS: one error naming the binary and the fix')
  if require('perfhat').client() ~= nil then
    fail('a client is running although the server does not exist')
  end
  if vim.api.nvim_buf_line_count(0) < 40 then
    fail('the file did not open')
  end
  vim.cmd('checkhealth perfhat')
  local report = table.concat(vim.api.nvim_buf_get_lines(0, 0, -1, false), '\n')
  if not (report:find('ERROR', 1, true) and report:find('not executable', 1, true)) then
    fail('checkhealth does not report the missing server:\n' .. report)
  end
  out('PASS: checkhealth reports the missing server')
  out('ALL PASSED')
  vim.cmd('qa!')
end

local ran, err = xpcall(main, debug.traceback)
if not ran then
  fail('error in the check: ' .. tostring(err))
end
