// LightScientist run controls: where the run is (stage N of M, time in this stage) and
// Cancel / Pause after this stage (then "pausing after STAGE") / Re-run this stage / Resume, plus the banner (with
// Resume) shown when the kernel behind the dashboard is gone. A click goes through the
// server extension's control endpoint; only without one does it use the widget's comm.
// Runs after server.js (el, pageConfig, relative, call, viaComm, WORDS).

function render({ model, el: root }) {
  const box = el("div", "ls-controls", undefined, root);
  box.setAttribute("role", "group");
  box.setAttribute("aria-label", "run controls");
  const row = el("div", "ls-row ls-live", undefined, box);
  const where = el("span", "ls-chip ls-progress", undefined, row);
  where.title = "progress: the stage's place in the table, and the wall time of this visit";
  const styled = "jp-Button jp-mod-styled";
  const cancel = el("button", styled + " jp-mod-reject ls-cancel", "Cancel", row);
  const pause = el("button", styled + " ls-pause", "Pause after this stage", row);
  const pausing = el("span", "ls-chip ls-warn ls-pausing", "", row);
  pausing.title = "a pause was asked for: the run stops once this stage finishes; Resume goes on";
  const rerun = el("button", styled + " ls-rerun", "Re-run this stage", row);
  const resume = el("button", styled + " jp-mod-accept ls-resume", "Resume", row);
  const pathBox = el("div", "ls-row ls-path", undefined, box);
  const pathChip = el("span", "ls-chip ls-code ls-path-chip", undefined, pathBox);
  const pathText = el("bdi", "", "", pathChip); // the path reads left to right, cut at its start
  const copyPath = el("button", styled + " ls-copy-path", "Copy path", pathBox);
  copyPath.setAttribute("aria-label", "Copy the project folder's path");
  const ask = el("div", "ls-row ls-confirm ls-warn", undefined, box);
  ask.setAttribute("role", "alertdialog");
  ask.setAttribute("aria-label", "Confirm");
  const askText = el("span", "", undefined, ask);
  const yes = el("button", styled + " jp-mod-warn ls-confirm-yes", "", ask);
  const no = el("button", styled + " ls-confirm-no", "Keep going", ask);
  ask.hidden = true;
  const times = el("details", "ls-times", undefined, box);
  const timesTitle = el("summary", "", "Time per stage", times);
  const timesList = el("ul", "ls-times-list", undefined, times);
  const outcome = el("div", "ls-outcome", undefined, box);
  outcome.setAttribute("role", "status");
  outcome.setAttribute("aria-live", "polite");

  const dead = el("div", "ls-dead", undefined, box);
  dead.setAttribute("role", "alert");
  el("b", "", "This dashboard is not live", dead);
  const deadWhy = el("span", "", "", dead);
  const deadRow = el("div", "ls-row", undefined, dead);
  const deadResume = el("button", styled + " jp-mod-accept ls-dead-resume", "Resume", deadRow);
  deadResume.setAttribute("aria-label", "Resume the project in the background (through the server)");
  el("span", "ls-muted", "or run in a cell:", deadRow);
  const cmd = el("code", "ls-code ls-resume-command", "", deadRow);
  cmd.style.userSelect = "all";
  const copy = el("button", styled + " ls-copy", "Copy", deadRow);
  copy.setAttribute("aria-label", "Copy the resume command");
  const deadOutcome = el("div", "ls-outcome", undefined, dead);
  deadOutcome.setAttribute("role", "status");

  let busy = false;
  let confirming = null;

  function draw() {
    const r = model.get("run") || {};
    root.hidden = !r.status;
    if (!r.status) return;
    const pos = r.position ? `stage ${r.position[0]} of ${r.position[1]} · ` : "";
    const ended = r.status === "done"; // the banner's Resume stays for any other status
    // at the end there is no stage to be in: the status line says done
    where.textContent = ended ? "" : `${pos}${r.stage_time || "0s"} in ${r.stage}`;
    where.hidden = ended;
    // which controls apply is the kernel's rule (app/controls.py `applicable`), shared by
    // every screen
    const a = r.actions || {};
    cancel.hidden = !a.cancel;
    pause.hidden = !a.pause;
    pausing.hidden = !a.pausing;
    pausing.textContent = r.pause_after ? `pausing after ${r.pause_after}` : "";
    rerun.hidden = !a.rerun;
    resume.hidden = !a.resume;
    // a gone kernel: a finished project has nothing to resume
    deadWhy.textContent = ended
      ? ": the kernel that drew it restarted or went away. The project is done; what is shown is its end."
      : ": the kernel that drew it restarted or went away, so its run has stopped and what is shown is as it was. ";
    deadRow.hidden = ended;
    pause.setAttribute("aria-label", `Pause after ${r.stage} finishes`);
    rerun.setAttribute("aria-label", `Re-run ${r.stage} from its start`);
    cancel.setAttribute("aria-label", "Cancel the project and its workers");
    for (const b of [cancel, pause, rerun, resume]) b.disabled = busy;
    cmd.textContent = model.get("resume") || "%lightscientist resume";
    // the folder as the file browser names it (from the server root), whole in the tooltip
    // and in what Copy path copies; outside the server root, the whole path, cut at its start
    const full = model.get("root") || "";
    const cfgNow = pageConfig();
    const rel = cfgNow ? relative(full, cfgNow.serverRoot) : null;
    pathText.textContent = rel === null ? full : rel || ".";
    pathChip.title = full;
    pathChip.dataset.full = full;
    const key = JSON.stringify(r.times || []);
    if (timesList.dataset.key !== key) {
      timesList.dataset.key = key;
      timesList.textContent = "";
      for (const [stage, time, visits] of r.times || []) {
        const item = el("li", "", undefined, timesList);
        el("span", "ls-code", stage, item);
        el("span", "ls-muted", ` ${time}${visits > 1 ? ` · ${visits} visits` : ""}`, item);
      }
      timesTitle.textContent = `Time per stage (${(r.times || []).length} visited)`;
    }
    times.hidden = !(r.times || []).length;
  }

  function show(node, cls, text) {
    node.className = "ls-outcome " + cls;
    node.textContent = text;
  }

  async function send(action, node) {
    const r = model.get("run") || {};
    busy = true;
    draw();
    show(node, "", "sending…");
    const body = { action, stage: action === "resume" ? null : r.stage || null };
    let answer = null;
    const cfg = pageConfig();
    const rel = cfg ? relative(model.get("root"), cfg.serverRoot) : null;
    try {
      if (rel !== null) {
        const got = await call(cfg, "POST", "control", { path: rel, from: "dashboard", ...body });
        if (got.status === 200) answer = { ok: true, text: got.data.message };
        else if (got.status !== 404 || got.data?.status) {
          answer = { ok: false, text: "not done: " + (got.data?.message || "HTTP " + got.status) };
        }
      }
    } catch (_e) {
      answer = null; // the server did not answer: try the kernel
    }
    if (answer === null) {
      answer = await viaComm(model, { kind: "control", ...body },
                             "no answer from the server or the kernel within 2 s");
    }
    show(node, answer.ok ? "ls-ok" : "ls-err", answer.text);
    busy = false;
    draw();
  }

  function confirm(action, text, label) {
    confirming = action;
    askText.textContent = text;
    yes.textContent = label;
    ask.hidden = false;
    yes.focus();
  }

  cancel.addEventListener("click", () => {
    const r = model.get("run") || {};
    confirm("cancel", `Cancel the project at ${r.stage}? Its workers stop; Resume can ` +
            "start it again later.", "Cancel the project");
  });
  rerun.addEventListener("click", () => {
    const r = model.get("run") || {};
    confirm("rerun", `Re-run ${r.stage}? The run stops, the files go back to how they were ` +
            "when the stage started (the later snapshots stay in the history), and it " +
            "starts again in the background.", `Re-run ${r.stage}`);
  });
  yes.addEventListener("click", () => {
    ask.hidden = true;
    const action = confirming;
    confirming = null;
    if (action) send(action, outcome);
  });
  no.addEventListener("click", () => { ask.hidden = true; confirming = null; });
  pause.addEventListener("click", () => send("pause", outcome));
  resume.addEventListener("click", () => send("resume", outcome));
  deadResume.addEventListener("click", () => send("resume", deadOutcome));
  function copier(button, text, label) {
    button.addEventListener("click", () => {
      const done = (said) => { button.textContent = said; setTimeout(() => { button.textContent = label; }, 2000); };
      if (!navigator.clipboard) { done("Select it to copy"); return; }
      navigator.clipboard.writeText(text()).then(() => done("Copied"),
                                                 () => done("Select it to copy"));
    });
  }
  copier(copy, () => cmd.textContent, "Copy");
  copier(copyPath, () => pathChip.dataset.full || "", "Copy path");
  model.on("change:run", draw);
  model.on("change:resume", draw);
  draw();
}

export default { render };
