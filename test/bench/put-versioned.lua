-- wrk script for v4 PUT at a version (bench:v4).
-- Arguments (after `--`): the bearer token and a file of lines "<path> <version>": the resources
-- to replace and their stored versions. Each request replaces one resource at the version this
-- thread last saw for it, and each answer's version (or, after a 409, its currentVersion) is
-- remembered, so that every write names the version it replaces.

local threads = 0

function setup(thread)
  thread:set("offset", threads * 7919)
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
  for line in io.lines(args[2]) do
    local path, version = line:match("^(%S+)%s+(%d+)$")
    if path then
      paths[#paths + 1] = path
      local id = path:match("([^/]+)$")
      ids[#ids + 1] = id
      versions[id] = tonumber(version)
    end
  end
  index = (offset or 0) % #paths
end

local last = nil

function request()
  index = index % #paths + 1
  n = n + 1
  last = ids[index]
  local body = string.format('{"data":{"name":"bench %d","status":"active","budget":%d},"version":%d}', n, 1000 + n % 5000, versions[last])
  return wrk.format("PUT", paths[index], headers, body)
end

function response(status, headers, body)
  local id = body:match('"id":"([^"]+)"')
  local version = body:match('"version":(%d+)')
  if status == 200 and id and version then
    versions[id] = tonumber(version)
  elseif status == 409 and last then
    local current = body:match('"currentVersion":(%d+)')
    if current then versions[last] = tonumber(current) end
  end
end
