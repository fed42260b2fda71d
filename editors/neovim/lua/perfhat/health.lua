-- :checkhealth perfhat (Neovim 0.7 API `require('health').report_*`, and `vim.health.*` on
-- newer versions).
local M = {}

local h = vim.health or require('health')
local start = h.start or h.report_start
local ok = h.ok or h.report_ok
local warn = h.warn or h.report_warn
local err = h.error or h.report_error
local info = h.info or h.report_info

local function check_version()
  local v = vim.version()
  local text = ('Neovim %d.%d.%d'):format(v.major, v.minor, v.patch)
  if vim.fn.has('nvim-0.7') ~= 1 then
    err(text .. ': perfhat needs Neovim 0.7 or newer')
  elseif vim.lsp.inlay_hint then
    ok(text .. ': native inlay hints')
  else
    ok(text .. ': inlay hints drawn as end-of-line virtual text (native hints need 0.10)')
  end
end

local function check_server(perfhat)
  local exe = perfhat.options.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    err(('server %q is not executable'):format(exe), {
      'Build it: cmake --build build --target perfhat-lsp',
      'Then: require("perfhat").setup{cmd = {"/abs/path/build/server/perfhat-lsp"}}',
    })
    return
  end
  local out = vim.fn.system({ exe, '--version' })
  if vim.v.shell_error == 0 then
    ok(('server: %s (%s)'):format(vim.fn.exepath(exe), vim.split(vim.trim(out), '\n')[1]))
  else
    warn(('server %s --version exited with %d: %s'):format(exe, vim.v.shell_error, vim.trim(out)))
  end
end

local function check_settings(s)
  info('profile: ' .. tostring(s.profile or 'server default'))
  if s.feedbackFile then
    local f = io.open(s.feedbackFile, 'r')
    if not f then
      err('settings.feedbackFile is not readable: ' .. s.feedbackFile)
    else
      local text = f:read('*a')
      f:close()
      if pcall(vim.fn.json_decode, text) then
        ok('feedback file: ' .. s.feedbackFile)
      else
        err('feedback file is not valid JSON: ' .. s.feedbackFile)
      end
    end
  end
  if s.handler then
    if vim.fn.executable('curl') == 1 then
      vim.fn.system({ 'curl', '-sS', '-m', '2', '-o', '/dev/null', '-w', '%{http_code}',
        s.handler .. '/healthz' })
      if vim.v.shell_error == 0 then
        ok('handler answers: ' .. s.handler)
      else
        warn('handler unreachable: ' .. s.handler .. ' (hints come from the cache, marked stale)')
      end
    else
      info('handler: ' .. s.handler .. ' (curl not found, not probed)')
    end
  end
  if not s.feedbackFile and not s.handler then
    info('no settings.handler / settings.feedbackFile: the server uses its command line, '
      .. 'PERFHAT_* environment or .perfhat.json')
  end
end

local function check_clients(perfhat)
  local n = 0
  for _, c in pairs((vim.lsp.get_clients or vim.lsp.get_active_clients)()) do
    if c.name == 'perfhat' then
      n = n + 1
      local bufs = vim.tbl_keys(c.attached_buffers or {})
      ok(('client %d running for %s, %d buffer(s) attached'):format(c.id, tostring(c.config.root_dir), #bufs))
    end
  end
  if n == 0 then
    info('no perfhat-lsp running (it starts when a C/C++ buffer opens)')
  end
  if perfhat.last_error then
    warn('last error: ' .. perfhat.last_error)
  end
end

function M.check()
  start('perfhat')
  check_version()
  local perfhat = require('perfhat')
  if not perfhat.options then
    err('require("perfhat").setup{} has not been called')
    return
  end
  check_server(perfhat)
  check_settings(perfhat.options.settings)
  check_clients(perfhat)
end

return M
