-- wrk script for `make bench`: POST a different JSON payload per request (one in ten dropped, as in
-- bench/workload.py), with the token in BENCH_TOKEN; BENCH_STASH names the stash (unset: the
-- hand-written /bench/items/). done() prints the figures as one JSON line for bench/processes.py.
wrk.method = "POST"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "Token " .. (os.getenv("BENCH_TOKEN") or "")
local stash = os.getenv("BENCH_STASH") or ""
local prefix = stash ~= "" and string.format('"stash":"%s",', stash) or ""

local threads = {}

function setup(thread)
  thread:set("id", #threads + 1)
  table.insert(threads, thread)
end

function init(args)
  n = id * 10000000
  non_2xx = 0
end

local function payload(n)
  local kind = n % 50
  local text = "item " .. n .. ": " .. string.rep("lorem ipsum dolor ", n % 9)
  local score = string.format("%.2f", 0.2 + (n % 80) / 100)
  local note = ""
  if kind == 17 then note = ',"note":"Spam, lovely spam"' end
  if kind == 27 then text = text .. string.rep("x", 2000) end
  if kind == 37 then score = "0.1" end
  if kind == 47 then text = text .. " free money inside" end
  local text_field = kind == 7 and "" or string.format('"text":"%s",', text)
  return string.format('{%s"score":%s,"data":{"n":%d,"tags":["bench","t%d"]%s}}', text_field, score, n, n % 5, note)
end

function request()
  n = n + 1
  return wrk.format(nil, nil, nil, string.format('{%s"payload":%s}', prefix, payload(n)))
end

function response(status, headers, body)
  if status < 200 or status > 299 then
    non_2xx = non_2xx + 1
  end
end

function done(summary, latency, requests)
  local bad = 0
  for _, thread in ipairs(threads) do
    bad = bad + thread:get("non_2xx")
  end
  local e = summary.errors
  io.write(string.format('wrk-result {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, '
    .. '"non_2xx": %d, "connect": %d, "read": %d, "write": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99),
    bad, e.connect, e.read, e.write, e.timeout))
end
