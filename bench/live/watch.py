"""A watcher of the live page, as the page itself reads it: the event stream, and the
recent spikes every half second over one kept-alive connection. Usage: watch.py URL_WITH_TOKEN"""
import http.client
import json
import sys
import threading
import time
from urllib.parse import urlsplit, parse_qs

url = urlsplit(sys.argv[1])
token = parse_qs(url.query)["token"][0] if url.query else ""
events = 0


def read_events():
    global events
    c = http.client.HTTPConnection(url.hostname, url.port)
    c.request("GET", "/api/events?token=" + token)
    r = c.getresponse()
    for line in r.fp:
        if line.startswith(b"data:"):
            events += 1


threading.Thread(target=read_events, daemon=True).start()
c = http.client.HTTPConnection(url.hostname, url.port)
following = 0
while True:
    try:
        c.request("GET", "/api/spikes?from=%d&token=%s" % (following, token))
        following = json.loads(c.getresponse().read())["completed"] + 1
    except Exception:
        break
    time.sleep(0.5)
print("events read:", events)
