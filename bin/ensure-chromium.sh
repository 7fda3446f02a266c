#!/bin/sh
# Makes sure Debian's chromium is installed before `npm test`, whose browser tests
# (test/console/) drive it with playwright-core. As root on Debian/Ubuntu it installs the package,
# as bin/ensure-redis.sh installs redis-server; otherwise it says what to install, and the browser
# tests skip with that reason (the rest of the suite runs: this never fails the test command).
CHROMIUM=/usr/bin/chromium
[ -x "$CHROMIUM" ] && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "chromium is missing: installing Debian's chromium package for the browser tests" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends chromium >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends chromium >/dev/null; } ||
    echo "could not install chromium with apt-get: the browser tests will be skipped" >&2
  exit 0
fi
echo "chromium is not installed (Debian/Ubuntu: sudo apt-get install -y chromium): the browser tests will be skipped" >&2
exit 0
