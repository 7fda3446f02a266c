#!/bin/sh
# Makes sure Debian's rabbitmq-server is installed before `npm test`: the tests of message
# delivery (hermes) start a private broker from it (test/support/rabbitmq.ts), and the README's
# walk-through reads it back with stomp.py (python3-stomp). Unlike Redis it is
# optional: when it cannot be installed this says why and exits 0, and those tests are skipped
# with the reason. `npm start` never needs it (a site points hermes at its own broker).
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && /usr/bin/python3 -c 'import stomp' >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "rabbitmq-server or python3-stomp is missing: installing them with apt-get (for the message broker tests)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Installed, never started as a system service: the tests start their own broker.
  if apt-get install -y --no-install-recommends rabbitmq-server python3-stomp >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends rabbitmq-server python3-stomp >/dev/null 2>&1; }; then
    exit 0
  fi
  echo "could not install rabbitmq-server and python3-stomp with apt-get: the message broker tests will be skipped" >&2
  exit 0
fi
echo "rabbitmq-server or python3-stomp is not installed (Debian/Ubuntu: sudo apt-get install -y rabbitmq-server python3-stomp):" >&2
echo "the message broker tests will be skipped." >&2
exit 0
