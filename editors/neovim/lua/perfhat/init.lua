-- perfhat for Neovim (0.7+): starts perfhat-lsp for C/C++ buffers and shows its production
-- performance feedback as inlay hints (native on >= 0.10, end-of-line virtual text before),
-- hover, code lenses and diagnostics.
--   require('perfhat').setup{ cmd = { '/path/to/perfhat-lsp', '--feedback-file', 'f.json' } }
local config = require('perfhat.config')
local hints = require('perfhat.hints')

local M = {}

-- API differences across Neovim 0.7 - 0.11+.
local get_clients = vim.lsp.get_clients or vim.lsp.get_active_clients
local method_call = vim.fn.has('nvim-0.11') == 1
local function request(client, method, params, handler, bufnr)
  if method_call then
    return client:request(method, params, handler, bufnr)
  end
  return client.request(method, params, handler, bufnr)
end
local function notify_server(client, method, params)
  if method_call then
    return client:notify(method, params)
  end
  return client.notify(method, params)
end
M._request = request

M.options = nil
-- root_dir -> client id (one server per project root).
local clients = {}
-- Last error starting the server, shown by :checkhealth perfhat.
M.last_error = nil

local function notify(msg, level)
  vim.notify('perfhat: ' .. msg, level or vim.log.levels.INFO)
end

local function find_root(path, markers)
  local dir = vim.fn.fnamemodify(path, ':p:h')
  while dir and dir ~= '' do
    for _, m in ipairs(markers) do
      if vim.loop.fs_stat(dir .. '/' .. m) then
        return dir
      end
    end
    local parent = vim.fn.fnamemodify(dir, ':h')
    if parent == dir then
      break
    end
    dir = parent
  end
  return vim.fn.fnamemodify(path, ':p:h')
end

local function capabilities()
  local caps = vim.lsp.protocol.make_client_capabilities()
  -- 0.7-0.9 do not announce inlay hints; we implement them (hints.lua), so say so, and accept
  -- the server's refresh requests for hints and code lenses.
  caps.textDocument = caps.textDocument or {}
  caps.textDocument.inlayHint = caps.textDocument.inlayHint or {
    dynamicRegistration = false,
    resolveSupport = { properties = {} },
  }
  caps.workspace = caps.workspace or {}
  caps.workspace.inlayHint = { refreshSupport = true }
  caps.workspace.codeLens = { refreshSupport = true }
  return caps
end

local function refresh_codelens(bufnr)
  if not M.options.codelens then
    return
  end
  vim.api.nvim_buf_call(bufnr, function()
    pcall(vim.lsp.codelens.refresh)
  end)
end

local function attached_buffers(client_id)
  local out = {}
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr) and vim.lsp.buf_is_attached(bufnr, client_id) then
      out[#out + 1] = bufnr
    end
  end
  return out
end

-- Server-to-client refresh requests that this Neovim does not handle itself (0.7-0.9 have no
-- inlay-hint client; codeLens refresh handling arrived in 0.10).
local function handlers()
  local h = {}
  if not (hints.native and M.options.inlay_hints == 'auto') then
    h['workspace/inlayHint/refresh'] = function(_, _, ctx)
      local client = vim.lsp.get_client_by_id(ctx.client_id)
      if client then
        hints.refresh_client(client)
      end
      return vim.NIL
    end
  end
  if not vim.lsp.handlers['workspace/codeLens/refresh'] then
    h['workspace/codeLens/refresh'] = function(_, _, ctx)
      for _, b in ipairs(attached_buffers(ctx.client_id)) do
        refresh_codelens(b)
      end
      return vim.NIL
    end
  end
  return h
end

-- The settings as a JSON object (an empty Lua table would be encoded as an array).
function M.settings()
  local s = M.options.settings
  if next(s) == nil then
    return vim.empty_dict()
  end
  return s
end

local function on_attach(client, bufnr)
  hints.attach(client, bufnr, M.options.inlay_hints, M.options.hint_debounce_ms)
  if M.options.codelens then
    refresh_codelens(bufnr)
    local group = vim.api.nvim_create_augroup('perfhat_codelens_' .. bufnr, { clear = true })
    vim.api.nvim_create_autocmd({ 'BufEnter', 'InsertLeave', 'BufWritePost', 'CursorHold' }, {
      group = group,
      buffer = bufnr,
      callback = function()
        refresh_codelens(bufnr)
      end,
    })
  end
  if M.options.on_attach then
    M.options.on_attach(client, bufnr)
  end
end

-- Starts (or reuses) the server for the project of `bufnr` and attaches the buffer.
function M.attach(bufnr)
  bufnr = bufnr or vim.api.nvim_get_current_buf()
  local name = vim.api.nvim_buf_get_name(bufnr)
  if name == '' or vim.bo[bufnr].buftype ~= '' then
    return nil
  end
  local exe = M.options.cmd[1]
  if vim.fn.executable(exe) ~= 1 then
    M.last_error = ('server binary %q not found or not executable'):format(exe)
    if not M._warned_missing then
      M._warned_missing = true
      notify(M.last_error .. '. Build it with `cmake --build build --target perfhat-lsp` and '
        .. 'pass its path: require("perfhat").setup{cmd = {"/path/to/perfhat-lsp"}}',
        vim.log.levels.ERROR)
    end
    return nil
  end
  local root = find_root(name, M.options.root_markers)
  local config = {
    name = 'perfhat',
    cmd = M.options.cmd,
    cmd_env = M.options.cmd_env,
    root_dir = root,
    workspace_folders = { { uri = vim.uri_from_fname(root), name = root } },
    init_options = M.settings(),
    settings = { perfhat = M.settings() },
    capabilities = capabilities(),
    handlers = handlers(),
    on_attach = on_attach,
    on_exit = function(code, signal)
      clients[root] = nil
      if code ~= 0 then
        M.last_error = ('perfhat-lsp exited with code %d (signal %d)'):format(code, signal)
        vim.schedule(function()
          notify(M.last_error .. '; see :LspLog', vim.log.levels.WARN)
        end)
      end
    end,
  }
  if vim.lsp.start then
    -- >= 0.8: reuses the client with the same name and root, and attaches the buffer.
    local id = vim.lsp.start(config, { bufnr = bufnr })
    if id then
      clients[root] = id
    end
    return id
  end
  local id = clients[root]
  if id and not vim.lsp.get_client_by_id(id) then
    id = nil
  end
  if not id then
    id = vim.lsp.start_client(config)
    if not id then
      M.last_error = 'vim.lsp.start_client failed for ' .. table.concat(M.options.cmd, ' ')
      notify(M.last_error, vim.log.levels.ERROR)
      return nil
    end
    clients[root] = id
  end
  vim.lsp.buf_attach_client(bufnr, id)
  return id
end

-- The running perfhat client for a buffer (or any perfhat client).
function M.client(bufnr)
  for _, c in pairs(get_clients()) do
    if c.name == 'perfhat' and (bufnr == nil or vim.lsp.buf_is_attached(bufnr, c.id)) then
      return c
    end
  end
  return nil
end

-- Sends new settings to the running servers (workspace/didChangeConfiguration).
function M.update_settings(settings)
  M.options.settings = vim.tbl_deep_extend('force', M.options.settings, settings or {})
  for _, c in pairs(get_clients()) do
    if c.name == 'perfhat' then
      c.config.settings = { perfhat = M.settings() }
      notify_server(c, 'workspace/didChangeConfiguration', { settings = { perfhat = M.settings() } })
    end
  end
end

local function execute(client, command, arguments, callback)
  request(client, 'workspace/executeCommand', { command = command, arguments = arguments },
    function(err, result)
      if err then
        notify(command .. ' failed: ' .. tostring(err.message), vim.log.levels.ERROR)
        return
      end
      if callback then
        callback(result)
      end
    end, vim.api.nvim_get_current_buf())
end

-- :PerfhatRefresh: drop cached feedback, fetch again, redraw hints and lenses.
function M.refresh()
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr) or M.client()
  if not client then
    notify('no perfhat-lsp running for this buffer', vim.log.levels.WARN)
    return
  end
  execute(client, 'perfhat.refresh', {}, function()
    for _, b in ipairs(attached_buffers(client.id)) do
      if not (hints.native and M.options.inlay_hints == 'auto') then
        hints.request(client, b)
      end
      refresh_codelens(b)
    end
    notify('feedback refreshed')
  end)
end

local json = require('perfhat.json')

local function show_in_scratch(title, result)
  local text
  if type(result) == 'string' then
    text = result
  else
    text = json.pretty(result)
  end
  vim.cmd('botright new')
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = 'nofile'
  vim.bo[buf].bufhidden = 'wipe'
  vim.bo[buf].swapfile = false
  pcall(vim.api.nvim_buf_set_name, buf, 'perfhat://' .. title)
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, vim.split(text, '\n', { plain = true }))
  vim.bo[buf].filetype = type(result) == 'string' and 'markdown' or 'json'
  vim.bo[buf].modifiable = false
end

-- :PerfhatShowData [key]: the raw production data of a function key, or of the node under the
-- cursor (the server offers it as a code action carrying the key).
function M.show_data(key)
  local bufnr = vim.api.nvim_get_current_buf()
  local client = M.client(bufnr)
  if not client then
    notify('no perfhat-lsp attached to this buffer', vim.log.levels.WARN)
    return
  end
  if key and key ~= '' then
    execute(client, 'perfhat.showData', { key }, function(result)
      show_in_scratch(key, result)
    end)
    return
  end
  local params = vim.lsp.util.make_range_params(0, client.offset_encoding)
  params.context = { diagnostics = {} }
  request(client, 'textDocument/codeAction', params, function(err, actions)
    if err then
      notify('code actions failed: ' .. tostring(err.message), vim.log.levels.ERROR)
      return
    end
    for _, a in ipairs(actions or {}) do
      local cmd = a.command
      if type(cmd) == 'table' then
        -- CodeAction { command = Command }
        if cmd.command == 'perfhat.showData' then
          local k = cmd.arguments and cmd.arguments[1]
          return execute(client, cmd.command, cmd.arguments, function(result)
            show_in_scratch(type(k) == 'string' and k or 'data', result)
          end)
        end
      elseif cmd == 'perfhat.showData' then
        -- Command { command = 'perfhat.showData', arguments = ... }
        local k = a.arguments and a.arguments[1]
        return execute(client, cmd, a.arguments, function(result)
          show_in_scratch(type(k) == 'string' and k or 'data', result)
        end)
      end
    end
    notify('no production data under the cursor', vim.log.levels.INFO)
  end, bufnr)
end

function M.setup(user)
  M.options = config.resolve(user)
  local group = vim.api.nvim_create_augroup('perfhat', { clear = true })
  vim.api.nvim_create_autocmd('FileType', {
    group = group,
    pattern = M.options.filetypes,
    callback = function(args)
      M.attach(args.buf)
    end,
  })
  vim.api.nvim_create_user_command('PerfhatRefresh', function()
    M.refresh()
  end, { desc = 'perfhat: refetch production feedback and redraw' })
  vim.api.nvim_create_user_command('PerfhatShowData', function(a)
    M.show_data(a.args)
  end, { nargs = '?', desc = 'perfhat: show raw production data (key or under cursor)' })
  -- Buffers already open when setup() runs (e.g. plugin loaded lazily on FileType).
  for _, bufnr in ipairs(vim.api.nvim_list_bufs()) do
    if vim.api.nvim_buf_is_loaded(bufnr)
      and vim.tbl_contains(M.options.filetypes, vim.bo[bufnr].filetype) then
      M.attach(bufnr)
    end
  end
end

return M
