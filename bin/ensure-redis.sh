#!/bin/sh
# Makes sure a redis-server binary is available before `npm start` and `npm test`, which start a
# private one when REDIS_URL is unset. As root on Debian/Ubuntu it installs the package;
# otherwise it says what to install.
[ -n "${REDIS_URL:-}" ] && exit 0
command -v redis-server >/dev/null 2>&1 && exit 0
if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
  echo "redis-server is missing: installing Debian's redis-server package" >&2
  export DEBIAN_FRONTEND=noninteractive
  apt-get install -y --no-install-recommends redis-server >/dev/null 2>&1 ||
    { apt-get update >/dev/null && apt-get install -y --no-install-recommends redis-server >/dev/null; } ||
    { echo "could not install redis-server with apt-get" >&2; exit 1; }
  exit 0
fi
echo "redis-server is not installed. Install it (Debian/Ubuntu: sudo apt-get install -y redis-server)," >&2
echo "or set REDIS_URL to a Redis server you already run." >&2
exit 1
