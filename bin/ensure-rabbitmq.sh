#!/bin/sh
# Makes sure Debian's rabbitmq-server is installed before `npm test`: the tests of message
# delivery (hermes) start a private broker from it (test/support/rabbitmq.ts). Unlike Redis it is
# optional: when it cannot be installed this says why and exits 0, and those tests are skipped
# with the reason. `npm start` never needs it (a site points hermes at its own broker).
[ -x /usr/lib/rabbitmq/bin/rabbitmq-server ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "rabbitmq-server is missing: installing Debian's rabbitmq-server package (for the message broker tests)" >&2
  export DEBIAN_FRONTEND=noninteractive
  # Installed, never started as a system service: the tests start their own broker.
  if apt-get install -y --no-install-recommends rabbitmq-server >/dev/null 2>&1 ||
    { apt-get update >/dev/null 2>&1 && apt-get install -y --no-install-recommends rabbitmq-server >/dev/null 2>&1; }; then
    exit 0
  fi
  echo "could not install rabbitmq-server with apt-get: the message broker tests will be skipped" >&2
  exit 0
fi
echo "rabbitmq-server is not installed (Debian/Ubuntu: sudo apt-get install -y rabbitmq-server):" >&2
echo "the message broker tests will be skipped." >&2
exit 0
