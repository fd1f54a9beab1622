// Opens a portal link: its token is in the URL's fragment (never sent to a server, so never
// in a log). It leaves the address bar at once and goes to Weir once, in a POST body.
(() => {
  const match = /(?:^#|&)token=([^&]+)/.exec(window.location.hash);
  window.history.replaceState(null, "", window.location.pathname);
  const form = document.getElementById("exchange");
  if (!match || !form) {
    const missing = document.getElementById("missing");
    if (missing) missing.hidden = false;
    return;
  }
  form.elements.token.value = decodeURIComponent(match[1]);
  form.submit();
})();
