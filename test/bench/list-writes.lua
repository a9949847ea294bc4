-- wrk script for a list read while its type is written (bench:resources, bench:v4).
-- Arguments (after `--`): the bearer token, a file whose first line is the list's path, the path
-- that creates a resource of the listed type, a file holding the JSON body of that create, and N:
-- one request in N is the create (N = 10: a tenth of the requests write), the rest read the list.

local headers = {}
local list
local write
local body
local every = 10
local n = 0

function init(args)
  headers["Authorization"] = "Bearer " .. args[1]
  headers["Content-Type"] = "application/json"
  for line in io.lines(args[2]) do
    if line ~= "" and not list then list = line end
  end
  write = args[3]
  local file = io.open(args[4], "r")
  body = file:read("*a")
  file:close()
  every = tonumber(args[5]) or 10
end

function request()
  n = n + 1
  if n % every == 0 then return wrk.format("POST", write, headers, body) end
  return wrk.format("GET", list, headers)
end
