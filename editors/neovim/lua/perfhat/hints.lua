-- Inlay hints. Neovim >= 0.10 renders them natively; 0.7-0.9 have no inlay-hint client, so we
-- request textDocument/inlayHint ourselves and draw each line's hints as end-of-line virtual text
-- (extmarks with virt_text_pos = 'eol'), re-requesting after edits and whenever the server sends
-- workspace/inlayHint/refresh (new production data).
local M = {}

M.ns = vim.api.nvim_create_namespace('perfhat_hints')
M.native = vim.lsp.inlay_hint ~= nil

-- bufnr -> { timer = uv timer, version = changedtick of the last request }
local state = {}

vim.api.nvim_set_hl(0, 'PerfhatHint', { default = true, link = 'Comment' })
vim.api.nvim_set_hl(0, 'PerfhatHintPredicted', { default = true, link = 'WarningMsg' })

local function label_text(hint)
  if type(hint.label) == 'string' then
    return hint.label
  end
  local parts = {}
  for _, part in ipairs(hint.label or {}) do
    parts[#parts + 1] = part.value or ''
  end
  return table.concat(parts)
end

-- Groups the hints by line (in column order) and draws one eol chunk list per line.
function M.render(bufnr, hints)
  if not vim.api.nvim_buf_is_valid(bufnr) then
    return
  end
  vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  local by_line = {}
  for _, h in ipairs(hints or {}) do
    local line = h.position and h.position.line
    if type(line) == 'number' then
      by_line[line] = by_line[line] or {}
      table.insert(by_line[line], h)
    end
  end
  local line_count = vim.api.nvim_buf_line_count(bufnr)
  for line, list in pairs(by_line) do
    if line >= 0 and line < line_count then
      table.sort(list, function(a, b)
        return (a.position.character or 0) < (b.position.character or 0)
      end)
      local chunks = {}
      for _, h in ipairs(list) do
        local text = label_text(h)
        -- Predicted values carry a leading '~' (DESIGN §6); highlight them differently.
        local group = text:find('^~') and 'PerfhatHintPredicted' or 'PerfhatHint'
        chunks[#chunks + 1] = { ' ' .. text, group }
      end
      vim.api.nvim_buf_set_extmark(bufnr, M.ns, line, 0, {
        virt_text = chunks,
        virt_text_pos = 'eol',
        hl_mode = 'combine',
      })
    end
  end
end

-- Requests hints for the whole buffer from one client and renders them.
function M.request(client, bufnr)
  if not vim.api.nvim_buf_is_valid(bufnr) or not vim.api.nvim_buf_is_loaded(bufnr) then
    return
  end
  local tick = vim.api.nvim_buf_get_changedtick(bufnr)
  state[bufnr] = state[bufnr] or {}
  state[bufnr].version = tick
  local last = vim.api.nvim_buf_line_count(bufnr)
  local params = {
    textDocument = { uri = vim.uri_from_bufnr(bufnr) },
    range = { start = { line = 0, character = 0 }, ['end'] = { line = last, character = 0 } },
  }
  require('perfhat')._request(client, 'textDocument/inlayHint', params, function(err, result)
    if err then
      -- Content modified / cancelled are routine while typing; the next request will follow.
      if err.code ~= -32801 and err.code ~= -32800 then
        vim.notify('perfhat: inlay hints failed: ' .. tostring(err.message), vim.log.levels.WARN)
      end
      return
    end
    -- Drop answers to an older buffer state: a newer request is on its way.
    if state[bufnr] and state[bufnr].version ~= tick then
      return
    end
    M.render(bufnr, result or {})
  end, bufnr)
end

function M.schedule(client, bufnr, delay_ms)
  state[bufnr] = state[bufnr] or {}
  local s = state[bufnr]
  if s.timer then
    s.timer:stop()
  else
    s.timer = vim.loop.new_timer()
  end
  s.timer:start(delay_ms, 0, vim.schedule_wrap(function()
    M.request(client, bufnr)
  end))
end

-- Attaches hint rendering to a buffer. mode: 'auto' | 'virtual_text' | false.
function M.attach(client, bufnr, mode, debounce_ms)
  if mode == false then
    return
  end
  if mode == 'auto' and M.native then
    -- 0.10 takes (enable, filter); some 0.10 pre-releases took (bufnr, enable).
    if not pcall(vim.lsp.inlay_hint.enable, true, { bufnr = bufnr }) then
      pcall(vim.lsp.inlay_hint.enable, bufnr, true)
    end
    return
  end
  state[bufnr] = state[bufnr] or {}
  if state[bufnr].attached then
    return
  end
  state[bufnr].attached = true
  state[bufnr].client_id = client.id
  vim.api.nvim_buf_attach(bufnr, false, {
    on_lines = function()
      if not state[bufnr] then
        return true -- detach
      end
      M.schedule(client, bufnr, debounce_ms)
    end,
    on_detach = function()
      M.detach(bufnr)
    end,
  })
  M.request(client, bufnr)
end

function M.detach(bufnr)
  local s = state[bufnr]
  if s and s.timer then
    s.timer:stop()
    s.timer:close()
  end
  state[bufnr] = nil
  if vim.api.nvim_buf_is_valid(bufnr) then
    vim.api.nvim_buf_clear_namespace(bufnr, M.ns, 0, -1)
  end
end

-- workspace/inlayHint/refresh: re-request every buffer this client draws hints for.
function M.refresh_client(client)
  for bufnr, s in pairs(state) do
    if s.attached and s.client_id == client.id then
      M.request(client, bufnr)
    end
  end
end

-- Buffers with virtual-text hints (for :checkhealth and tests).
function M.attached_buffers()
  local out = {}
  for bufnr, s in pairs(state) do
    if s.attached then
      out[#out + 1] = bufnr
    end
  end
  return out
end

return M
