// The dashboard widgets' way to the server extension (prepended to gate.js and controls.js
// by their Python side: anywidget modules cannot import each other). No build step.

const WORDS = { running: "running", waiting_user: "waiting for you", done: "done",
                failed: "failed", cancelled: "cancelled", stopped: "stopped",
                paused: "paused" };
const ANSWER_MS = 2000;

function el(tag, cls, text, parent) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  if (parent) parent.appendChild(node);
  return node;
}

// JupyterLab's (and Notebook 7's) page configuration: base URL, token, server root
function pageConfig() {
  const node = document.getElementById("jupyter-config-data");
  if (!node) return null;
  try {
    const data = JSON.parse(node.textContent || "{}");
    if (!data.baseUrl) return null;
    return { base: data.baseUrl.replace(/\/?$/, "/"), token: data.token || "",
             serverRoot: (data.serverRoot || "").replace(/\/+$/, "") };
  } catch (_e) {
    return null;
  }
}

// the workspace relative to the server root, or null when it is outside (or unknown)
function relative(root, serverRoot) {
  if (!root || !serverRoot) return null;
  if (root === serverRoot) return "";
  return root.startsWith(serverRoot + "/") ? root.slice(serverRoot.length + 1) : null;
}

function xsrf() {
  const match = document.cookie.match("\\b_xsrf=([^;]*)\\b");
  return match ? decodeURIComponent(match[1]) : "";
}

async function call(cfg, method, path, body) {
  const headers = { "Content-Type": "application/json", "X-XSRFToken": xsrf() };
  if (cfg.token) headers.Authorization = "token " + cfg.token;
  const response = await fetch(cfg.base + "lightscientist/" + path, {
    method, headers, credentials: "same-origin",
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  let data = null;
  try { data = await response.json(); } catch (_e) { data = null; }
  return { status: response.status, data };
}

// a custom message to the kernel and its answer ({kind: "outcome", ok, text}), or a
// refusal after ANSWER_MS: the fallback where no server extension answers
function viaComm(model, message, late) {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      model.off("msg:custom", onMsg);
      resolve({ ok: false, text: late });
    }, ANSWER_MS);
    function onMsg(msg) {
      if (!msg || msg.kind !== "outcome") return;
      clearTimeout(timer);
      model.off("msg:custom", onMsg);
      resolve(msg);
    }
    model.on("msg:custom", onMsg);
    model.send(message);
  });
}
