// LightScientist gate card: what a decision approves, and one row of controls.
// A click goes through the server extension's reply endpoint (works after a reload and
// without the kernel); only without a server extension does it use the widget's comm.
// No build step, no imports: it runs offline inside anywidget's front end, after
// server.js (el, pageConfig, relative, call, viaComm), which gate_actions.py puts before it.

function verdict(d) {
  const yes = d.kind === "question" ? "answered yes" : "approved";
  const no = d.kind === "question" ? "answered no" : "rejected";
  const where = d.to ? ` → now at ${d.to}` : "";
  return `${d.approve ? yes : no} ${d.stage}${where}`;
}

// after a queued reply, watch the project for up to ANSWER_MS for where it went
async function settled(cfg, rel, id, approve, stage) {
  const until = Date.now() + ANSWER_MS;
  while (Date.now() < until) {
    await new Promise((r) => setTimeout(r, 250));
    const got = await call(cfg, "GET", "project?path=" + encodeURIComponent(rel));
    const found = (got.data?.decisions || []).find((d) => d.id === id);
    if (found) return verdict(found);
  }
  return `${approve ? "approval" : "rejection"} of ${stage} sent; the run picks it up`;
}

// at a review stage: each reviewer's scores, the decision they add up to, what was asked
function drawReviews(box, r) {
  box.textContent = "";
  box.hidden = !r;
  if (!r) return;
  el("h4", "ls-reviews-title", r.round ? `Reviews · round ${r.round}` : "Reviews", box);
  if ((r.reviews || []).length) {
    const table = el("table", "", undefined, el("div", "ls-review-table", undefined, box));
    const head = el("tr", "", undefined, el("thead", "", undefined, table));
    for (const name of ["reviewer", ...r.columns, "decision"]) el("th", "", name, head);
    const body = el("tbody", "", undefined, table);
    for (const review of r.reviews) {
      const row = el("tr", "", undefined, body);
      el("td", "", String(review.reviewer), row);
      for (const name of r.columns) el("td", "ls-score", String(review.scores[name] ?? ""), row);
      el("td", "ls-review-decision", review.decision, row).dataset.decision = review.decision;
    }
  }
  const summary = el("p", "ls-review-summary", r.summary, box);
  if (r.decision) summary.dataset.decision = r.decision;
  function list(title, items) {
    if (!items.length) return;
    el("div", "ls-muted", title, box);
    const ul = el("ul", "", undefined, box);
    for (const item of items) el("li", "", item, ul);
  }
  list("Required changes:", r.required_changes || []);
  list(`Round ${r.earlier_round} asked for:`, r.earlier_changes || []);
  for (const problem of r.problems || []) el("p", "ls-err", problem, box);
}

// what the stage's visit was given from the user's memory: each entry's kind, project, text
function drawRecalled(box, items) {
  box.textContent = "";
  box.hidden = !items.length;
  if (!items.length) return;
  el("h4", "ls-recalled-title", "Recalled from memory", box);
  const list = el("ul", "", undefined, box);
  for (const entry of items) {
    const item = el("li", "", undefined, list);
    item.dataset.entry = String(entry.id);
    el("span", "ls-badge", entry.kind, item);
    el("span", "ls-muted ls-recalled-project", entry.project, item);
    el("span", "ls-recalled-text", entry.text, item);
  }
}

function render({ model, el: root }) {
  const card = el("div", "ls-card ls-gatecard", undefined, root);
  card.setAttribute("role", "region");
  const title = el("h3", "ls-card-title", undefined, card);
  const badge = el("span", "ls-badge", undefined, card);
  const summary = el("div", "ls-gate-summary", undefined, card);
  const files = el("ul", "ls-files", undefined, card);
  const reviews = el("section", "ls-reviews", undefined, card);
  reviews.setAttribute("aria-label", "Reviews");
  const recalled = el("section", "ls-recalled", undefined, card);
  recalled.setAttribute("aria-label", "Recalled from memory");
  const row = el("div", "ls-row ls-live", undefined, card);
  const approve = el("button", "jp-Button jp-mod-styled jp-mod-accept ls-approve", "Approve", row);
  const reject = el("button", "jp-Button jp-mod-styled jp-mod-reject ls-reject", "Reject", row);
  const comment = el("input", "ls-comment", undefined, row);
  comment.type = "text";
  comment.setAttribute("aria-label", "Comment (kept in PROCESS.md; on reject, for the next worker)");
  comment.placeholder = "comment (optional)";
  const targetLabel = el("label", "ls-row ls-muted", "on reject, back to", row);
  const target = el("select", "ls-target", undefined, targetLabel);
  target.setAttribute("aria-label", "On reject, go back to this stage");
  const outcome = el("div", "ls-outcome", undefined, card);
  outcome.setAttribute("role", "status");
  outcome.setAttribute("aria-live", "polite");
  const dead = el("div", "ls-dead", undefined, root);
  dead.setAttribute("role", "alert");
  let busy = false;

  function draw() {
    const c = model.get("card") || {};
    const shown = !!c.id;
    root.hidden = !shown;
    if (!shown) return;
    card.dataset.decision = c.id;
    card.dataset.settled = c.settled ? "true" : "false";
    // answered: the card folds to the line that says how (the timeline keeps it)
    for (const part of [title, summary, files, reviews, recalled]) part.classList.toggle("ls-folded", !!c.settled);
    card.setAttribute("aria-label", c.heading || "decision");
    title.textContent = c.heading || "";
    badge.textContent = c.badge || "";
    badge.hidden = !c.badge;
    summary.textContent = c.summary || "";
    summary.hidden = !c.summary;
    summary.title = c.summary_full || "";
    files.textContent = "";
    const cfg = pageConfig();
    const rel = cfg ? relative(model.get("root"), cfg.serverRoot) : null;
    for (const name of c.files || []) {
      const item = el("li", "", undefined, files);
      if (rel !== null) {
        const link = el("a", "ls-link", name, item);
        link.href = cfg.base + "lab/tree/" + (rel ? rel + "/" : "") + name;
        link.target = "_blank";
        link.rel = "noopener";
        link.title = "open " + name + " in a new tab";
      } else {
        el("code", "ls-code", name, item);
      }
    }
    files.hidden = !(c.files || []).length;
    drawReviews(reviews, c.reviews || null);
    drawRecalled(recalled, c.recalled || []);
    approve.textContent = c.kind === "gate" ? "Approve" : "Yes";
    reject.textContent = c.kind === "gate" ? "Reject" : "No";
    approve.setAttribute("aria-label", (c.kind === "gate" ? "Approve " : "Answer yes to ") + (c.stage || ""));
    reject.setAttribute("aria-label", (c.kind === "gate" ? "Reject " : "Answer no to ") + (c.stage || ""));
    if (target.dataset.decision !== c.id) {
      target.dataset.decision = c.id;
      target.textContent = "";
      for (const [label, value] of c.targets || []) {
        const option = el("option", "", label, target);
        option.value = value;
      }
      comment.value = "";
      busy = false;
    }
    targetLabel.hidden = c.kind !== "gate" || !(c.targets || []).length;
    row.hidden = !!c.settled;
    approve.disabled = reject.disabled = busy || !!c.settled;
    const o = model.get("outcome") || {};
    if (o.text && (c.settled || !busy)) show(o.state === "refused" ? "ls-err" : "ls-ok", o.text);
    else if (!c.settled && !busy) show("", "");
    dead.textContent = "";
    dead.hidden = !!c.settled;  // the banner matters where a decision still waits
    el("b", "", "The kernel behind this dashboard is gone", dead);
    el("span", "", " (restarted or shut down). Approve / Reject still reach the project " +
       "through the server; Resume, at the top of the dashboard, runs it again.", dead);
  }

  function show(cls, text) {
    outcome.className = "ls-outcome " + cls;
    outcome.textContent = text;
  }

  async function described(data, cfg, rel, reply) {
    const id = data.decision_id || reply.decision_id;
    const stage = (model.get("card") || {}).stage || "";
    if (data.applied_by === "server") {
      const words = WORDS[data.status] || data.status;
      const on = data.resumed_by ? ` · going on in the background (pid ${data.resumed_by})` : "";
      return `${reply.approve ? "approved" : "rejected"} ${stage} → now at ${data.stage} (${words})${on}`;
    }
    return settled(cfg, rel, id, reply.approve, stage);
  }

  async function decide(yes) {
    const c = model.get("card") || {};
    if (busy || !c.id || c.settled) return;
    busy = true;
    approve.disabled = reject.disabled = true;
    show("", "sending…");
    const reply = { approve: yes, comment: comment.value.trim(), decision_id: c.id,
                    to_stage: !yes && c.kind === "gate" ? target.value || null : null };
    const answer = await sendReply(
      model, reply,
      "no answer from the kernel within 2 s: reply from the LightScientist side panel or " +
      "with %lightscientist reply y|n",
      (data, cfg, rel) => described(data, cfg, rel, reply));
    show(answer.ok ? "ls-ok" : "ls-err", answer.text);
    if (!answer.ok) { busy = false; approve.disabled = reject.disabled = false; }
  }

  approve.addEventListener("click", () => decide(true));
  reject.addEventListener("click", () => decide(false));
  comment.addEventListener("keydown", (e) => {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) decide(true);
  });
  model.on("change:card", draw);
  model.on("change:outcome", draw);
  model.on("change:root", draw);
  draw();
}

export default { render };
