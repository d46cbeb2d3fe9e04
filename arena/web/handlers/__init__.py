"""The web app's request handlers, by page family: events and boards (:mod:`.events`), entrants
(:mod:`.entrants`), games and replays (:mod:`.games`), a running referee's matches (:mod:`.live`). Each
reads the app's state (:class:`.common.WebState`, on ``app.state``); :mod:`arena.web.app` routes to them."""
