// LightScientist event stream: a bounded, filterable list fed by batched custom messages.
// No build step, no imports: it runs offline inside anywidget's front end.

const LAYERS = [["0", "all layers"], ["1", "L1 controller"], ["2", "L2 supervisor"],
                ["3", "L3 workers"]];
const SHOWN_MAX = 300;

function el(tag, cls, text) {
  const node = document.createElement(tag);
  if (cls) node.className = cls;
  if (text !== undefined) node.textContent = text;
  return node;
}

function clock(ts) {
  const d = new Date((ts || 0) * 1000);
  return [d.getHours(), d.getMinutes(), d.getSeconds()]
    .map((n) => String(n).padStart(2, "0")).join(":");
}

// the same rule as lightscientist_jupyter.events.make_filter
function keeper(model) {
  const layer = model.get("layer");
  const type = model.get("type_filter").trim();
  const worker = model.get("worker").trim();
  return (e) => {
    if (layer && e.layer !== layer) return false;
    if (worker && e.worker !== worker) return false;
    if (type) {
      if (type.endsWith(".") || type.endsWith("*")) {
        return (e.type || "").startsWith(type.replace(/\*+$/, ""));
      }
      return e.type === type;
    }
    return true;
  };
}

function render({ model, el: root }) {
  root.classList.add("ls-events");
  const bar = el("div", "ls-events-bar");
  const layer = el("select", "ls-events-layer");
  for (const [value, label] of LAYERS) {
    const option = el("option", "", label);
    option.value = value;
    layer.append(option);
  }
  layer.setAttribute("aria-label", "Show the events of this layer");
  const type = el("input", "ls-events-type");
  type.placeholder = "type or prefix (stage.)";
  type.setAttribute("aria-label", "Show events of this type or type prefix");
  const worker = el("input", "ls-events-worker");
  worker.placeholder = "worker id";
  worker.setAttribute("aria-label", "Show the events of this worker");
  const count = el("span", "ls-events-count");
  bar.append(layer, type, worker, count);
  const list = el("div", "ls-events-list");
  list.tabIndex = 0;  // it scrolls: keys must reach it
  list.setAttribute("role", "log");
  list.setAttribute("aria-label", "events, newest first; Enter on a row shows it whole");
  root.append(bar, list);
  const open = new Set();  // rows shown whole (click or Enter), kept across redraws

  let events = [];
  let skipped = 0;
  let total = 0;
  const seen = new Set();
  let pending = false;

  function add(batch) {
    let unsorted = false;
    const last = events.length ? events[events.length - 1].seq : -Infinity;
    for (const e of batch || []) {
      if (seen.has(e.seq)) continue;
      seen.add(e.seq);
      if (e.seq < last) unsorted = true;
      events.push(e);
    }
    if (unsorted) events.sort((a, b) => a.seq - b.seq);
    const max = model.get("maxlen") || 500;
    if (events.length > max) {
      for (const e of events.splice(0, events.length - max)) seen.delete(e.seq);
    }
    schedule();
  }

  function schedule() {
    if (pending) return;
    pending = true;
    requestAnimationFrame(draw);
  }

  function row(e) {
    const line = el("div", `ls-event ls-l${e.layer}`);
    line.append(el("span", "ls-ev-time", clock(e.ts)), el("span", "ls-ev-layer", `L${e.layer}`),
                el("span", "ls-ev-type", e.type), el("span", "ls-ev-stage", e.stage),
                el("span", "ls-ev-worker", e.worker), el("span", "ls-ev-msg", e.message));
    line.title = `#${e.seq} ${e.type} ${e.stage} ${e.worker}\n${e.message}`;
    line.tabIndex = 0;
    line.setAttribute("role", "button");  // it opens and closes: a disclosure
    line.setAttribute("aria-expanded", open.has(e.seq) ? "true" : "false");
    if (open.has(e.seq)) line.classList.add("ls-open");
    const toggle = () => {
      if (open.has(e.seq)) open.delete(e.seq); else open.add(e.seq);
      line.classList.toggle("ls-open");
      line.setAttribute("aria-expanded", open.has(e.seq) ? "true" : "false");
    };
    line.addEventListener("click", toggle);
    line.addEventListener("keydown", (ev) => {
      if (ev.key === "Enter" || ev.key === " ") { ev.preventDefault(); toggle(); }
    });
    return line;
  }

  function draw() {
    pending = false;
    const keep = keeper(model);
    const shown = events.filter(keep);
    const rows = shown.slice(-SHOWN_MAX).reverse().map(row);
    list.replaceChildren(...rows);
    const hidden = skipped ? ` · ${skipped} not sent (burst)` : "";
    count.textContent = `${shown.length} shown · ${Math.max(total, events.length)} events${hidden}`;
  }

  function syncControls() {
    layer.value = String(model.get("layer") || 0);
    if (document.activeElement !== type) type.value = model.get("type_filter");
    if (document.activeElement !== worker) worker.value = model.get("worker");
    schedule();
  }

  const onCustom = (msg) => {
    if (!msg || msg.kind !== "events") return;
    skipped += msg.skipped || 0;
    total = msg.total || total;
    add(msg.events);
  };
  const onTail = () => {
    total = Math.max(total, model.get("total") || 0);
    add(model.get("tail"));
  };
  layer.addEventListener("change", () => {
    model.set("layer", Number(layer.value));
    model.save_changes();
    schedule();
  });
  type.addEventListener("input", () => {
    model.set("type_filter", type.value);
    model.save_changes();
    schedule();
  });
  worker.addEventListener("input", () => {
    model.set("worker", worker.value);
    model.save_changes();
    schedule();
  });
  model.on("msg:custom", onCustom);
  model.on("change:tail", onTail);
  model.on("change:layer change:type_filter change:worker", syncControls);
  onTail();
  syncControls();
  return () => {
    model.off("msg:custom", onCustom);
    model.off("change:tail", onTail);
    model.off("change:layer change:type_filter change:worker", syncControls);
  };
}

export default { render };
