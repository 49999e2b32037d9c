#!/bin/sh
# Warden's .deb when electron-builder makes it with fpm (electron-builder.yml deb.afterRemove).
set -e
if [ "$1" = remove ] || [ "$1" = purge ]; then
  rm -f '/usr/bin/warden-app' '/usr/bin/warden'
fi
if command -v update-desktop-database >/dev/null 2>&1; then update-desktop-database -q /usr/share/applications || true; fi
exit 0
