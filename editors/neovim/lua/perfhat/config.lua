-- Defaults and option handling for the perfhat Neovim plugin. One visible table of tunables;
-- setup{} merges the user's values over it.
local M = {}

M.defaults = {
  -- Command that starts the language server (LSP over stdio). A string is split on spaces only
  -- when it has no path separators; pass a list for anything with arguments.
  cmd = { 'perfhat-lsp' },
  filetypes = { 'c', 'cpp', 'objc', 'objcpp', 'cuda' },
  -- Files whose presence marks a project root (searched upward from the buffer).
  root_markers = { '.perfhat.json', '.perfhat.yaml', 'compile_commands.json', '.git' },
  -- Sent as initializationOptions and with workspace/didChangeConfiguration. Same shape as the
  -- project's .perfhat.json (which these override, so only set what you mean to override):
  --   handler = 'http://127.0.0.1:4319', token = '...', feedbackFile = 'data.json',
  --   profile = 'design' | 'debug', compileCommands = 'build/',
  --   features = { regression_relative = 0.2, regression_absolute_ns = 1e6, learn_thresholds = true },
  --   cache = { maxEntries = 10000, ttlSeconds = 600 }
  settings = {},
  -- Inlay hints: 'auto' = native on Neovim >= 0.10, end-of-line virtual text before that;
  -- 'virtual_text' forces the fallback; false disables them.
  inlay_hints = 'auto',
  -- Delay after an edit before hints are re-requested (the server also debounces its reparse).
  hint_debounce_ms = 300,
  codelens = true,
  -- Optional function(client, bufnr) run after the server attaches to a buffer (key maps...).
  on_attach = nil,
  -- Extra environment for the server process.
  cmd_env = nil,
}

local function deep_merge(base, override)
  local out = vim.deepcopy(base)
  for k, v in pairs(override or {}) do
    if type(v) == 'table' and type(out[k]) == 'table' and not (vim.islist or vim.tbl_islist)(v) then
      out[k] = deep_merge(out[k], v)
    else
      out[k] = v
    end
  end
  return out
end

-- Returns the merged options or raises a readable error for wrong types, so a typo in setup{}
-- is reported once instead of failing later inside an autocommand.
function M.resolve(user)
  local o = deep_merge(M.defaults, user or {})
  if type(o.cmd) == 'string' then
    o.cmd = { o.cmd }
  end
  vim.validate({
    cmd = { o.cmd, 'table' },
    filetypes = { o.filetypes, 'table' },
    root_markers = { o.root_markers, 'table' },
    settings = { o.settings, 'table' },
    hint_debounce_ms = { o.hint_debounce_ms, 'number' },
    on_attach = { o.on_attach, 'function', true },
  })
  if #o.cmd == 0 then
    error('perfhat: setup{cmd = ...} must name the perfhat-lsp binary')
  end
  local p = o.settings.profile
  if p ~= nil and p ~= 'design' and p ~= 'debug' then
    error("perfhat: settings.profile must be 'design' or 'debug', got " .. tostring(p))
  end
  return o
end

return M
