// The dashboard widgets' way to the server extension (prepended to gate.js, budget.js and
// controls.js by their Python side: anywidget modules cannot import each other). No build step.

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

// a reply (approve, decision_id, comment, to_stage, budget) through the server extension,
// else through the kernel's comm; {ok, text}. `described(data, cfg, rel)` words the server's
// answer (it may wait for the run to take the reply); `late` is said when the kernel is mute
async function sendReply(model, reply, late, described) {
  const cfg = pageConfig();
  const rel = cfg ? relative(model.get("root"), cfg.serverRoot) : null;
  let answer = null;
  try {
    if (rel !== null) answer = await replyViaServer(cfg, rel, reply, described);
  } catch (e) {
    answer = null; // the server did not answer: try the kernel
  }
  return answer === null ? viaComm(model, { kind: "reply", ...reply }, late) : answer;
}

async function replyViaServer(cfg, rel, reply, described) {
  const got = await call(cfg, "POST", "reply", { path: rel, from: "dashboard", ...reply });
  if (got.status === 404 && !got.data?.status) return null; // no server extension
  if (got.status !== 200) {
    return { ok: false, text: "not applied: " + (got.data?.message || "HTTP " + got.status) };
  }
  return { ok: true, text: await described(got.data, cfg, rel) };
}
