-- wrk script for v4 PUT at a version (bench:v4).
-- Arguments (after `--`): the bearer token, a file of lines "<path> <version>" (the resources to
-- replace and their stored versions), and the number of threads. Each thread takes its own share
-- of the resources, so that no other thread changes their versions; each request replaces one at
-- the version the thread last saw for it, and each answer's version is remembered, so that every
-- write names the version it replaces.

local threads = 0

function setup(thread)
  thread:set("slot", threads)
  threads = threads + 1
end

local paths = {}
local versions = {}
local ids = {}
local headers = {}
local index = 0
local n = 0

function init(args)
  headers["Authorization"] = "Bearer " .. args[1]
  headers["Content-Type"] = "application/json"
  local count = tonumber(args[3]) or 1
  local number = 0
  for line in io.lines(args[2]) do
    local path, version = line:match("^(%S+)%s+(%d+)$")
    number = number + 1
    if path and number % count == (slot or 0) then
      paths[#paths + 1] = path
      local id = path:match("([^/]+)$")
      ids[#ids + 1] = id
      versions[id] = tonumber(version)
    end
  end
  index = 0
end

function request()
  index = index % #paths + 1
  n = n + 1
  local id = ids[index]
  local body = string.format('{"data":{"name":"bench %d","status":"active","budget":%d},"version":%d}', n, 1000 + n % 5000, versions[id])
  return wrk.format("PUT", paths[index], headers, body)
end

function response(status, headers, body)
  local id = body:match('"id":"([^"]+)"')
  local version = body:match('"version":(%d+)')
  if status == 200 and id and version then versions[id] = tonumber(version) end
end
