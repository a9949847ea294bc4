-- wrk script for the resources benchmark.
-- Arguments (after `--`): the bearer token, a file with one request path per line, and optionally
-- a method and a file holding a JSON body sent with every request.
-- Each thread walks the paths in order from its own starting point, so GET-by-id rotates over
-- the whole id set; a file with one line repeats one request (the list workload).

local threads = 0

function setup(thread)
  thread:set("offset", threads * 7919)
  threads = threads + 1
end

local paths = {}
local headers = {}
local index = 0
local method = "GET"
local body = nil

function init(args)
  headers["Authorization"] = "Bearer " .. args[1]
  for line in io.lines(args[2]) do
    if line ~= "" then paths[#paths + 1] = line end
  end
  index = (offset or 0) % #paths
  if args[3] then method = args[3] end
  if args[4] then
    local file = io.open(args[4], "r")
    body = file:read("*a")
    file:close()
    headers["Content-Type"] = "application/json"
  end
end

function request()
  index = index % #paths + 1
  return wrk.format(method, paths[index], headers, body)
end
