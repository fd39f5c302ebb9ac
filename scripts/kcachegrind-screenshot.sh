#!/usr/bin/env bash
# Opens a profile in the real KCachegrind under Xvfb and saves a PNG of the
# screen: what a user sees. Usage: kcachegrind-screenshot.sh PROFILE OUT.png [XDOTOOL-ARGS...]
# Extra arguments are run as `xdotool ARGS` before the shot (to select a
# function or a tab). Needs: kcachegrind xvfb dbus-x11 x11-apps imagemagick xdotool.
#
# docs/kcachegrind-call-graph.png: the demo profile, then
#   xdotool mousemove 230 328 click 1 sleep 1 mousemove 521 956 click 1
# (select the toy's main in the flat profile, open the Call Graph tab);
# docs/kcachegrind-source.png: additionally
#   mousemove 240 404 click 1 sleep 1 mousemove 716 99 click 1
# (select sum_to, open the Source Code tab).
set -euo pipefail
profile=$1 out=$2
shift 2
bash "$(dirname "$0")/setup.sh" kcachegrind xvfb dbus-x11 x11-apps imagemagick xdotool
export DISPLAY=:77 XDG_RUNTIME_DIR=${XDG_RUNTIME_DIR:-$(mktemp -d)}
chmod 700 "$XDG_RUNTIME_DIR"
Xvfb "$DISPLAY" -screen 0 1600x1000x24 >/dev/null 2>&1 &
xvfb=$!
trap 'kill $xvfb 2>/dev/null || true' EXIT
sleep 1
dbus-launch --exit-with-session kcachegrind "$profile" >/dev/null 2>&1 &
sleep 6
# No window manager: close the tip of the day, fill the screen.
xdotool search --name "Tip of the Day" windowclose 2>/dev/null || true
main=$(xdotool search --name "$(basename "$profile")" | head -n 1)
xdotool windowmove "$main" 0 0 windowsize "$main" 1600 1000
sleep 2
if [ $# -gt 0 ]; then
  xdotool "$@"
  sleep 2
fi
xwd -root -silent | /usr/bin/convert xwd:- "$out"
pkill -f "kcachegrind $profile" || true
echo "wrote $out"
