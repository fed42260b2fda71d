-- What every real-Neovim check shares: its settings from the environment, one PASS/FAIL verdict
-- line per check, waiting with the run's timeout, opening a file with perfhat-lsp attached, and
-- ending Neovim with a verdict (exit code) whatever happens. A check loads it with
--   local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/nvim_harness.lua')
--   local t = H.new({ timeout_ms = 60000, dump = function(t) ... end })
-- and ends with t.run(main).
local H = {}

-- An environment variable the driver script must set.
function H.env(name)
  return assert(os.getenv(name), name .. ' not set')
end

function H.out(s)
  io.stdout:write(s .. '\n')
  io.stdout:flush()
end

-- opts.timeout_ms: default wait (PERFHAT_TEST_TIMEOUT_MS overrides); opts.dump(t): what to print
-- after a FAIL line (its own errors are ignored; t.bufnr is nil until t.open).
function H.new(opts)
  local t = { bufnr = nil, timeout = tonumber(os.getenv('PERFHAT_TEST_TIMEOUT_MS') or opts.timeout_ms) }

  function t.fail(msg)
    H.out('FAIL: ' .. msg)
    if opts.dump then
      pcall(opts.dump, t)
    end
    vim.cmd('cquit 1')
  end

  function t.pass(msg)
    H.out('PASS: ' .. msg)
  end

  function t.wait_for(what, predicate)
    if not vim.wait(t.timeout, predicate, 100) then
      t.fail('timed out after ' .. t.timeout .. ' ms waiting for ' .. what)
    end
  end

  -- The 0-based number and text of the first line of the buffer containing `pattern` (plain).
  function t.find_line(pattern)
    for i, line in ipairs(vim.api.nvim_buf_get_lines(t.bufnr, 0, -1, false)) do
      if line:find(pattern, 1, true) then
        return i - 1, line
      end
    end
    t.fail('sample file has no line containing ' .. pattern)
  end

  -- Edits the C++ file `path` and waits until perfhat-lsp is attached and initialized.
  function t.open(path, what)
    vim.cmd('edit ' .. vim.fn.fnameescape(path))
    t.bufnr = vim.api.nvim_get_current_buf()
    if vim.bo[t.bufnr].filetype ~= 'cpp' then
      t.fail('filetype is ' .. vim.bo[t.bufnr].filetype .. ', expected cpp')
    end
    local perfhat = require('perfhat')
    t.wait_for(what or 'perfhat-lsp to start', function()
      local c = perfhat.client(t.bufnr)
      return c ~= nil and c.initialized == true
    end)
  end

  -- The text of the floating window (the hover), or nil while there is none.
  function t.float_text()
    for _, win in ipairs(vim.api.nvim_list_wins()) do
      if vim.api.nvim_win_get_config(win).relative ~= '' then
        return table.concat(vim.api.nvim_buf_get_lines(vim.api.nvim_win_get_buf(win), 0, -1, false), '\n')
      end
    end
  end

  -- Opens the hover at the cursor, waits for its window and returns its text, checking that it
  -- holds each of `needles` (plain text).
  function t.hover(needles)
    vim.lsp.buf.hover()
    t.wait_for('the hover window', function()
      return t.float_text() ~= nil
    end)
    local text = t.float_text()
    for _, needle in ipairs(needles or {}) do
      if not text:find(needle, 1, true) then
        t.fail(('hover lacks %q:\n%s'):format(needle, text))
      end
    end
    return text
  end

  -- Waits for a code lens whose title holds `needle`, on the 0-based `line` (nil: any line),
  -- asking for the lenses again while there is none; returns its title.
  function t.wait_for_lens(what, line, needle)
    local title
    t.wait_for(what, function()
      for _, l in ipairs(vim.lsp.codelens.get(t.bufnr)) do
        if (line == nil or l.range.start.line == line) and l.command and l.command.title
          and l.command.title:find(needle, 1, true) then
          title = l.command.title
          return true
        end
      end
      vim.lsp.codelens.refresh()
      return false
    end)
    return title
  end

  -- The buffer's diagnostics and code lenses, one line each (for dumps).
  function t.dump_diagnostics()
    if not t.bufnr then
      return
    end
    for _, d in ipairs(vim.diagnostic.get(t.bufnr)) do
      H.out(('diagnostic line %d [%s] %s'):format(d.lnum + 1, tostring(d.severity), d.message))
    end
  end
  function t.dump_lenses()
    if not t.bufnr then
      return
    end
    for _, l in ipairs(vim.lsp.codelens.get(t.bufnr)) do
      H.out(('lens line %d: %s'):format(l.range.start.line + 1, l.command and l.command.title or '?'))
    end
  end

  -- A Lua error must end Neovim with a verdict, not leave it waiting for the timeout.
  function t.run(main)
    local ran, err = xpcall(main, debug.traceback)
    if not ran then
      t.fail('error in the check: ' .. tostring(err))
    end
  end

  return t
end

return H
