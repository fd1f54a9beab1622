// A portal page inside the operator's product tells the page that frames it how tall it is,
// whenever that changes: {"type": "weir:portal:resize", "height": <CSS px>}, posted only to the
// framing origin and only when the link lists it (its frame_ancestors), so a two-line script
// there can size the frame. Without this script the page works the same, inside a fixed frame.
(() => {
  if (window.parent === window) return;
  const listed = (document.documentElement.dataset.frameOrigins || "").split(" ").filter(Boolean);
  const ancestors = window.location.ancestorOrigins;
  const parent = (ancestors && ancestors[0]) || (document.referrer ? new URL(document.referrer).origin : "");
  const matches = (origin) => {
    if (origin === parent) return true;
    const [scheme, host] = origin.split("://*.");
    return host !== undefined && parent.startsWith(scheme + "://") && parent.endsWith("." + host);
  };
  if (!parent || !listed.some(matches)) return;
  let last = 0;
  const post = () => {
    const height = Math.ceil(document.body.scrollHeight);
    if (height === last) return;
    last = height;
    window.parent.postMessage({ type: "weir:portal:resize", height }, parent);
  };
  new ResizeObserver(post).observe(document.body);
  post();
})();
