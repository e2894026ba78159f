# Helpers of the tests of `siox web` (test_web.sh, test_sys_web.sh), sourced
# after lib.sh.

# start_web: `siox web` on the test's warehouse, on a free loopback port;
# sets URL. The binary itself in the background (not the siox_cli function,
# whose subshell's pid would be recorded and siox web outlive the test).
start_web() {
  WEB_PORT=$(free_port)
  "$SIOX_CLI" --data-dir "$SERVER_DIR" web --listen "127.0.0.1:$WEB_PORT" >>"$T/web.log" 2>&1 &
  PIDS+=($!)
  wait_port "$WEB_PORT" "siox web"
  URL="http://127.0.0.1:$WEB_PORT"
}

# web_page NAME HASH BUDGET_MS: the DOM of #/HASH after the page ran, in
# $T/NAME.html, and a screenshot in $ART/NAME.png. Virtual time stops while
# fetches are pending, so BUDGET is the page's own timers (the jobs page
# refreshes every 2 s and needs only its first load).
web_page() {
  local flags=(--headless=new --no-sandbox --disable-gpu --hide-scrollbars --user-data-dir="$T/chromium"
               --virtual-time-budget="$3" --window-size=1400,1800)
  timeout 300 chromium "${flags[@]}" --dump-dom "$URL/#/$2" >"$T/$1.html" 2>>"$T/chromium.log" ||
    fail "chromium could not load #/$2"
  timeout 300 chromium "${flags[@]}" --screenshot="$ART/$1.png" "$URL/#/$2" >>"$T/chromium.log" 2>&1 ||
    fail "chromium could not screenshot #/$2"
}
