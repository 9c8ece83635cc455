"""Reads an RSS or Atom feed as a feed reader does, with feedparser (which
sanitizes entry HTML the way most readers do), and says what a reader shows.

Usage: read_feed.py  (reads the feed on stdin)
Prints {"bozo", "title", "author", "entries": [{"title", "html", "text",
"tags", "author"}]} as JSON: `html` is the entry's summary as feedparser
hands it to a reader, `text` its visible text, `tags` the elements in it.
"""
import json
import sys
from html.parser import HTMLParser

import feedparser


class Seen(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.text, self.tags = [], []

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)

    def handle_data(self, data):
        self.text.append(data)


feed = feedparser.parse(sys.stdin.buffer.read())
entries = []
for e in feed.entries:
    html = e.get("summary", "")
    seen = Seen()
    seen.feed(html)
    entries.append({
        "title": e.get("title", ""),
        "html": html,
        "text": "".join(seen.text),
        "tags": seen.tags,
        "author": e.get("author", ""),
    })
print(json.dumps({
    "bozo": bool(feed.bozo),
    "bozo_exception": str(feed.get("bozo_exception", "")),
    "title": feed.feed.get("title", ""),
    "author": feed.feed.get("author", ""),
    "entries": entries,
}))
