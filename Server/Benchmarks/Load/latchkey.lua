-- wrk script for scripts/bench: feeds each request a distinct credential from a file and counts
-- outcomes per thread. Configured through the environment:
--   BENCH_KIND   classic | limited | refresh | me | code | apple
--   BENCH_INPUT  file, one credential per line (for `code`: "code verifier redirect client"; for
--                `apple`: "identity_token authorization_code")
--   BENCH_LIMIT  requests per run at most (single-use kinds also stop when their lines run out)
--   BENCH_CYCLE  1: reuse lines round-robin (classic repeat logins, /users/me); 0: each line once
--   BENCH_RATE   requests per second for this wrk (all its threads together); 0 or unset: as fast
--                as the connections go
local kind = os.getenv("BENCH_KIND")
local input = os.getenv("BENCH_INPUT")
local limit = tonumber(os.getenv("BENCH_LIMIT") or "0")
local cycle = os.getenv("BENCH_CYCLE") == "1"
-- Each thread has its own Lua state: the thread count must come from outside, not from setup().
local threadCount = tonumber(os.getenv("BENCH_THREADS") or "1")
-- Paced load: each thread hands out send times one interval apart, so the server sees a fixed
-- offered rate whatever its speed (a closed loop would run each backend at its own throughput,
-- and a server's CPU per request depends on how busy it is).
local rate = tonumber(os.getenv("BENCH_RATE") or "0")
local interval = rate > 0 and (1000000 * threadCount / rate) or 0
local nextSlot = 0

-- A thread that has sent its share appends a line here; scripts/bench then ends wrk with SIGINT
-- (wrk would otherwise wait out its whole -d duration).
local doneFile = os.getenv("BENCH_DONE_FILE")

local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock, bench_timespec *out);
]]
local function nowMicros()
  local t = ffi.new("bench_timespec")
  ffi.C.clock_gettime(1, t)  -- CLOCK_MONOTONIC
  return tonumber(t.tv_sec) * 1000000 + math.floor(tonumber(t.tv_nsec) / 1000)
end

local threads = {}
local counter = 0

function setup(thread)
  thread:set("index", counter)
  counter = counter + 1
  table.insert(threads, thread)
end

local lines, position, sent, other = {}, 0, 0, 0
ok, bad, firstSent, lastAnswer = 0, 0, 0, 0  -- globals: done() reads them from each thread
local stopped = false
local draining = false
local queue = {}  -- refresh: tokens ready to be used (each response returns the next one)
local perThreadLimit

function init(args)
  local all = {}
  for line in io.lines(input) do table.insert(all, line) end
  for i, line in ipairs(all) do
    if (i - 1) % threadCount == index then table.insert(lines, line) end
  end
  if kind == "refresh" then
    for _, line in ipairs(lines) do table.insert(queue, line) end
  end
  perThreadLimit = math.floor(limit / threadCount)
  -- wrk calls request() once on thread 0 right after init() only to count pipelined requests;
  -- that request is never sent, so it must not use up a credential.
  verifying = (index == 0)
end


local function stop()
  if not stopped then
    stopped = true
    if doneFile then
      local f = io.open(doneFile, "a")
      f:write("done\n")
      f:close()
    end
  end
  wrk.thread:stop()
  return wrk.format("GET", "/health")
end

function request()
  if verifying then
    verifying = false
    return wrk.format("GET", "/health")
  end
  if sent >= perThreadLimit then
    draining = true
    if ok + bad < sent then return wrk.format("GET", "/health") end
    return stop()
  end
  local line
  if kind == "refresh" then
    line = table.remove(queue, 1)
    if line == nil then return wrk.format("GET", "/health") end  -- all tokens in flight
  else
    position = position + 1
    if position > #lines then
      if not cycle then
        -- Out of credentials: drain what is in flight (cheap /health requests keep the
        -- connections busy meanwhile) and stop once every answer is in.
        position = #lines
        draining = true
        if ok + bad < sent then return wrk.format("GET", "/health") end
        return stop()
      end
      position = 1
    end
    line = lines[position]
  end
  sent = sent + 1
  if firstSent == 0 then firstSent = nowMicros() end
  if kind == "classic" then
    return wrk.format("POST", "/v1/auth/facebook", {["Content-Type"] = "application/json"},
      '{"accessToken":"' .. line .. '"}')
  elseif kind == "limited" then
    return wrk.format("POST", "/v1/auth/facebook", {["Content-Type"] = "application/json"},
      '{"idToken":"' .. line .. '","nonce":"bench-nonce"}')
  elseif kind == "apple" then
    local token, code = line:match("(%S+) (%S+)")
    return wrk.format("POST", "/v1/auth/apple", {["Content-Type"] = "application/json"},
      '{"idToken":"' .. token .. '","authorizationCode":"' .. code .. '","nonce":"bench-nonce"}')
  elseif kind == "refresh" then
    return wrk.format("POST", "/v1/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
      "grant_type=refresh_token&refresh_token=" .. line)
  elseif kind == "me" then
    return wrk.format("GET", "/v1/users/me", {["Authorization"] = "Bearer " .. line})
  elseif kind == "code" then
    local code, verifier, redirect, client = line:match("(%S+) (%S+) (%S+) (%S+)")
    return wrk.format("POST", "/v1/oauth/token", {["Content-Type"] = "application/x-www-form-urlencoded"},
      "grant_type=authorization_code&code=" .. code .. "&code_verifier=" .. verifier ..
      "&redirect_uri=" .. redirect .. "&client_id=" .. client)
  end
end

-- While draining, a connection waits 100 ms between its /health requests, so they stay a few
-- per connection and barely touch the latency figures.
function delay()
  if draining then return 100 end
  if interval == 0 then return 0 end
  local now = nowMicros()
  -- A slot already past is taken at once; the schedule does not bunch up to catch up on a
  -- slow moment beyond one interval.
  if nextSlot < now - interval then nextSlot = now end
  local wait = nextSlot - now
  nextSlot = nextSlot + interval
  return wait > 0 and math.floor(wait / 1000) or 0
end

function response(status, headers, body)
  lastAnswer = nowMicros()
  if status >= 200 and status < 300 then
    if kind == "refresh" then
      local token = body:match('"refresh_token":"([^"]+)"')
      if token then table.insert(queue, token) end
    end
    if body:find('"status":"ok"', 1, true) then other = other + 1 else ok = ok + 1 end
  else
    bad = bad + 1
    if bad <= 3 then io.stderr:write("bench: HTTP " .. status .. " " .. body:sub(1, 200) .. "\n") end
  end
end

function done(summary, latency, requests)
  local okTotal, badTotal, first, last = 0, 0, nil, 0
  for _, thread in ipairs(threads) do
    okTotal = okTotal + (thread:get("ok") or 0)
    badTotal = badTotal + (thread:get("bad") or 0)
    local sentAt = thread:get("firstSent") or 0
    if sentAt > 0 and (first == nil or sentAt < first) then first = sentAt end
    last = math.max(last, thread:get("lastAnswer") or 0)
  end
  local span = (first and last > first) and (last - first) or summary.duration
  local e = summary.errors
  io.write(string.format(
    '{"ok":%d,"http_errors":%d,"socket_errors":%d,"duration_us":%d,"p50_us":%d,"p90_us":%d,"p99_us":%d,"max_us":%d}\n',
    okTotal, badTotal, e.connect + e.read + e.write + e.timeout, span,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max))
end
