#!/bin/sh
# Warden's .deb when electron-builder makes it with fpm (electron-builder.yml
# deb.afterInstall): the same links and sandbox rule as scripts/deb.mjs's
# package, whose links are files of the package instead.
set -e
ln -sf '/opt/Warden/warden-app' '/usr/bin/warden-app'
ln -sf '/opt/Warden/bin/warden' '/usr/bin/warden'
if [ -L /proc/self/ns/user ] && unshare --user true 2>/dev/null; then
  chmod 0755 '/opt/Warden/chrome-sandbox'
else
  chmod 4755 '/opt/Warden/chrome-sandbox'
fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
exit 0
