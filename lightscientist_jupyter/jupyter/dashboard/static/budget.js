// LightScientist budget card: what a project spent, on what, the limit it reached, a field
// for the new limit, Raise and resume (reply y --budget KEY=N) and Stop (reply n).
// Sent through the server extension's reply endpoint (with a `budget` field); only without
// a server extension through the widget's comm. No build step, no imports: it runs after
// server.js (el, pageConfig, relative, call, viaComm, WORDS), which budget_card.py puts first.

function render({ model, el: root }) {
  const card = el("div", "ls-card ls-budgetcard", undefined, root);
  card.setAttribute("role", "region");
  const title = el("h3", "ls-card-title", undefined, card);
  const spent = el("div", "ls-budget-spent", undefined, card);
  const onWhat = el("div", "ls-muted ls-budget-on", undefined, card);
  const row = el("div", "ls-row ls-live", undefined, card);
  const label = el("label", "ls-row", undefined, row);
  const unit = el("span", "", "new limit", label);
  const limit = el("input", "ls-budget-limit", undefined, label);
  limit.type = "number";
  limit.min = "0";
  limit.step = "any";
  const raise = el("button", "jp-Button jp-mod-styled jp-mod-accept ls-budget-raise",
                   "Raise and resume", row);
  const stop = el("button", "jp-Button jp-mod-styled jp-mod-reject ls-budget-stop", "Stop", row);
  const outcome = el("div", "ls-outcome", undefined, card);
  outcome.setAttribute("role", "status");
  outcome.setAttribute("aria-live", "polite");
  let busy = false;

  function show(cls, text) {
    outcome.className = "ls-outcome " + cls;
    outcome.textContent = text;
  }

  function draw() {
    const c = model.get("card") || {};
    root.hidden = !c.id;
    if (!c.id) return;
    card.dataset.decision = c.id;
    card.dataset.settled = c.settled ? "true" : "false";
    card.setAttribute("aria-label", c.heading || "budget");
    title.textContent = c.heading || "";
    spent.textContent = c.spent || "";
    onWhat.textContent = c.on_what || "";
    unit.textContent = "new " + (c.scope || "project") + " limit, " + (c.key || "") + " ";
    limit.setAttribute("aria-label", "New limit of " + (c.key || "the budget"));
    if (limit.dataset.decision !== c.id) {
      limit.dataset.decision = c.id;
      limit.value = c.suggested || "";
      busy = false;
      show("", "");
    }
    row.hidden = !!c.settled;
    raise.disabled = stop.disabled = busy || !!c.settled;
    const o = model.get("outcome") || {};
    if (o.text) show(o.state === "refused" ? "ls-err" : "ls-ok", o.text);
  }


  async function decide(yes) {
    const c = model.get("card") || {};
    if (busy || !c.id || c.settled) return;
    const value = Number(limit.value);
    if (yes && !(value > 0)) {
      show("ls-err", "give the new limit: a number above " + (c.limit || 0));
      return;
    }
    busy = true;
    raise.disabled = stop.disabled = true;
    show("", "sending…");
    const reply = { approve: yes, comment: "", decision_id: c.id, to_stage: null,
                    budget: yes ? { [c.key]: value } : null };
    const answer = await sendReply(
      model, reply,
      "no answer from the kernel within 2 s: reply with %lightscientist reply y --budget " +
      c.key + "=…",
      (data) => (yes ? "budget raised" : "stopped") +
                (data.status ? " (" + (WORDS[data.status] || data.status) + ")" : ""));
    show(answer.ok ? "ls-ok" : "ls-err", answer.text);
    if (!answer.ok) { busy = false; raise.disabled = stop.disabled = false; }
  }

  raise.addEventListener("click", () => decide(true));
  stop.addEventListener("click", () => decide(false));
  limit.addEventListener("keydown", (e) => { if (e.key === "Enter") decide(true); });
  model.on("change:card", draw);
  model.on("change:outcome", draw);
  draw();
}

export default { render };
