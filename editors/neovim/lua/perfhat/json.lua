-- Indented JSON for showing raw production data (Neovim 0.7 has no pretty encoder).
local M = {}

local function is_array(t)
  if (vim.islist or vim.tbl_islist)(t) then
    return true
  end
  return next(t) == nil and getmetatable(t) ~= vim._empty_dict_mt
end

local function encode(v, indent, out)
  local t = type(v)
  if t == 'table' and v ~= vim.NIL then
    local pad = string.rep('  ', indent + 1)
    if is_array(v) then
      if #v == 0 then
        out[#out + 1] = '[]'
        return
      end
      out[#out + 1] = '[\n'
      for i, item in ipairs(v) do
        out[#out + 1] = pad
        encode(item, indent + 1, out)
        out[#out + 1] = i < #v and ',\n' or '\n'
      end
      out[#out + 1] = string.rep('  ', indent) .. ']'
    else
      local keys = vim.tbl_keys(v)
      if #keys == 0 then
        out[#out + 1] = '{}'
        return
      end
      table.sort(keys, function(a, b)
        return tostring(a) < tostring(b)
      end)
      out[#out + 1] = '{\n'
      for i, k in ipairs(keys) do
        out[#out + 1] = pad .. vim.fn.json_encode(tostring(k)) .. ': '
        encode(v[k], indent + 1, out)
        out[#out + 1] = i < #keys and ',\n' or '\n'
      end
      out[#out + 1] = string.rep('  ', indent) .. '}'
    end
  elseif v == nil or v == vim.NIL then
    out[#out + 1] = 'null'
  else
    out[#out + 1] = vim.fn.json_encode(v)
  end
end

function M.pretty(v)
  local out = {}
  encode(v, 0, out)
  return table.concat(out)
end

return M
