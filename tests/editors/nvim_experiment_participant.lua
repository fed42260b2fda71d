-- A scripted treatment participant of the controlled experiment in a real headless Neovim, run
-- by run_experiment_e2e.sh while `perfhat-experiment run` times the session. The plugin starts
-- perfhat-lsp through `perfhat-experiment lsp-proxy`, so what the server shows lands in the
-- session's event log. The participant makes task T4's change in the editor (the lazily loaded
-- effortSpent() call inside the loops of iterationMetrics()), waits for the regression warning
-- (first encounter), then hovers the culprit call (root cause) and leaves.
local H = dofile(vim.fn.fnamemodify(debug.getinfo(1, 'S').source:sub(2), ':h') .. '/nvim_harness.lua')
local exp = H.env('PERFHAT_TEST_EXPERIMENT')
local server = H.env('PERFHAT_TEST_SERVER')
local session = H.env('PERFHAT_TEST_SESSION')
local task_dir = H.env('PERFHAT_TEST_TASK_DIR')
local feedback = H.env('PERFHAT_TEST_FEEDBACK')
local t = H.new({
  timeout_ms = 90000,
  dump = function(t)
    t.dump_diagnostics()
  end,
})
local out, fail, wait_for = H.out, t.fail, t.wait_for
local bufnr

local function session_log()
  local f = io.open(session .. '/events.jsonl', 'r')
  if not f then
    return ''
  end
  local s = f:read('*a')
  f:close()
  return s
end

local function main()
  vim.lsp.set_log_level('warn')
  local perfhat = require('perfhat')
  perfhat.setup({
    cmd = { exp, 'lsp-proxy', '--session', session, '--', server, '--feedback-file', feedback,
            '--compile-commands', task_dir },
    hint_debounce_ms = 100,
  })
  t.open(task_dir .. '/samples/agile/iteration_service.cc', 'perfhat-lsp (through lsp-proxy) to initialize')
  bufnr = t.bufnr
  out('PASS: perfhat-lsp running through perfhat-experiment lsp-proxy')

  -- The change, typed into the buffer below the estimate line of iterationMetrics().
  local anchor
  for i, line in ipairs(vim.api.nvim_buf_get_lines(bufnr, 0, -1, false)) do
    if line:find('metrics.original_estimate += task.originalEstimate();', 1, true) then
      anchor = i
    end
  end
  if not anchor then
    fail('iteration_service.cc has no originalEstimate line to extend')
  end
  local indent = vim.api.nvim_buf_get_lines(bufnr, anchor - 1, anchor, false)[1]:match('^%s*')
  vim.api.nvim_buf_set_lines(bufnr, anchor, anchor, false,
                             { indent .. 'metrics.effort_spent += task.effortSpent();' })
  out('PASS: T4 change typed at line ' .. (anchor + 1))

  -- First encounter: the server's regression warning on iterationMetrics().
  wait_for('the regression warning on iterationMetrics()', function()
    for _, d in ipairs(vim.diagnostic.get(bufnr)) do
      if d.message:find('iterationMetrics', 1, true) then
        return true
      end
    end
    return false
  end)
  out('PASS: regression warning shown')
  wait_for('lsp_diagnostic in the session log', function()
    return session_log():find('"lsp_diagnostic"', 1, true) ~= nil
  end)

  -- Root cause: hover on the effortSpent() call just typed.
  local text = vim.api.nvim_buf_get_lines(bufnr, anchor, anchor + 1, false)[1]
  vim.api.nvim_win_set_cursor(0, { anchor + 1, (text:find('effortSpent', 1, true)) + 2 })
  vim.lsp.buf.hover()
  wait_for('the hover window on effortSpent()', function()
    local text = t.float_text()
    return text ~= nil and text ~= ''
  end)
  out('PASS: hover shown on effortSpent()')
  wait_for('lsp_hover in the session log', function()
    return session_log():find('"lsp_hover"', 1, true) ~= nil
  end)
  out('PASS: the session log holds the server\'s diagnostic and hover')
  vim.cmd('qa!')
end

t.run(main)
