// In shared because two layers send it: the app's app:// handler
// (main/app/protocol.ts) and the host's HTTP server (main/host/server.ts).

/**
 * The page's policy, sent by the app:// handler (protocol.ts) and by `warden
 * serve`, and in src/renderer/index.html's meta tag (without frame-ancestors,
 * which a meta tag cannot carry). No 'unsafe-inline' anywhere: the renderer
 * has no inline script or <style>, and React's style={…} props and uPlot set
 * styles through the CSSOM (element.style), which style-src does not govern.
 */
export const CONTENT_SECURITY_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'none'; frame-src 'none'; worker-src 'none'; frame-ancestors 'none'; form-action 'none'";
