-- wrk script for `make bench`: send, in turn, the requests listed in the file BENCH_REQUESTS
-- (one a line: method, path, cookie header, body; tab-separated), POSTs with the CSRF token in
-- BENCH_CSRF as a signed-in htmx page sends them. wrk itself counts only 4xx and 5xx as errors,
-- so every response outside 2xx is counted here (a redirect to the log-in page is a failure)
-- and the totals are printed on one "BENCH ..." line for bench/run.py.
local queue, position = {}, 0
non_2xx = 0  -- a global: done() reads it from each thread with thread:get
local threads = {}

function setup(thread)
  thread:set("thread_number", #threads)
  table.insert(threads, thread)
end

function init(args)
  local csrf = os.getenv("BENCH_CSRF") or ""
  local host = wrk.host .. ":" .. wrk.port
  for line in io.lines(os.getenv("BENCH_REQUESTS")) do
    local method, path, cookie, body = line:match("^([^\t]*)\t([^\t]*)\t([^\t]*)\t(.*)$")
    local headers = { Host = host }
    if cookie ~= "" then headers["Cookie"] = cookie end
    if method == "POST" then
      headers["Content-Type"] = "application/x-www-form-urlencoded"
      headers["X-CSRFToken"] = csrf
      headers["HX-Request"] = "true"
    end
    table.insert(queue, wrk.format(method, path, headers, body ~= "" and body or nil))
  end
  -- Threads start at different places in the list, so they do not answer the same item at once.
  position = (thread_number * 7) % #queue
end

function request()
  position = position % #queue + 1
  return queue[position]
end

function response(status, headers, body)
  if status < 200 or status > 299 then non_2xx = non_2xx + 1 end
end

function done(summary, latency, requests)
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("non_2xx") end
  local e = summary.errors
  io.write(string.format("BENCH requests=%d non_2xx=%d socket_errors=%d\n",
    summary.requests, total, e.connect + e.read + e.write + e.timeout))
end
