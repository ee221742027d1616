// Causantic dashboard: small progressive enhancements; every page works without this file.
"use strict";

// Open the folded sub-agent branches around the chunk a link points at, then scroll to it.
function revealTarget() {
  if (!location.hash.startsWith("#c-")) return;
  const target = document.getElementById(location.hash.slice(1));
  if (!target) return;
  for (let node = target.parentElement; node; node = node.parentElement) {
    if (node.tagName === "DETAILS") node.open = true;
  }
  document.querySelectorAll(".chunk.target").forEach((el) => el.classList.remove("target"));
  target.classList.add("target");
  target.scrollIntoView({ block: "start" });
}

// Forms marked data-partial fetch only their results and swap them in (htmx-style), keeping
// the address bar in step so a result page can be bookmarked or reloaded.
function partialForms() {
  document.querySelectorAll("form[data-partial]").forEach((form) => {
    const region = document.getElementById(form.dataset.partial);
    if (!region) return;
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const url = form.action + "?" + new URLSearchParams(new FormData(form)).toString();
      region.classList.add("loading");
      try {
        const response = await fetch(url, { headers: { "X-Partial": form.dataset.partial } });
        region.innerHTML = await response.text();
        history.pushState(null, "", url);
      } catch (error) {
        region.textContent = "The dashboard did not answer: is `causantic dashboard` still running?";
      } finally {
        region.classList.remove("loading");
      }
    });
  });
  window.addEventListener("popstate", () => location.reload());
}

// The topic map's labels (and dots) at a readable size on screen however narrow the map (in the
// SVG's own units they shrank with it, to 6 px text at 400 px), each moved inside the map if it
// would cross an edge, and drawn only where it overlaps no label of a larger topic (the page lists
// labels largest topic first): the rest are named by their dots' titles on hover.
const MAP_LABEL_PX = 12; // a label's font size on screen
const MAP_DOT_PX = 2.2; // a dot's radius on screen, at least
const MAP_GAP_PX = 4; // between two labels, and between a label and the map's edge

function fitMapLabels() {
  document.querySelectorAll("svg.topicmap").forEach((svg) => {
    const box = svg.viewBox.baseVal;
    const shown = svg.getBoundingClientRect().width;
    if (!shown) return;
    const unit = box.width / shown; // SVG units a screen pixel
    svg.style.setProperty("--map-label", `${Math.max(11, MAP_LABEL_PX * unit)}px`);
    svg.style.setProperty("--map-dot", `${Math.max(2.6, MAP_DOT_PX * unit)}px`);
    const gap = MAP_GAP_PX * unit;
    const [left, top] = [box.x + gap, box.y + gap];
    const [right, bottom] = [box.x + box.width - gap, box.y + box.height - gap];
    const kept = [];
    svg.querySelectorAll("a.lbl").forEach((link) => {
      const text = link.querySelector("text");
      text.dataset.x ??= text.getAttribute("x"); // the topic's centre, as the page drew it
      text.dataset.y ??= text.getAttribute("y");
      link.classList.remove("crowded");
      text.setAttribute("text-anchor", "middle");
      text.setAttribute("x", text.dataset.x);
      text.setAttribute("y", text.dataset.y);
      let b = text.getBBox();
      const dx = Math.max(left - b.x, 0) + Math.min(right - (b.x + b.width), 0);
      const dy = Math.max(top - b.y, 0) + Math.min(bottom - (b.y + b.height), 0);
      if (dx || dy) {
        text.setAttribute("x", String(Number(text.dataset.x) + dx));
        text.setAttribute("y", String(Number(text.dataset.y) + dy));
        b = text.getBBox();
      }
      const clash = kept.some(
        (k) =>
          b.x < k.x + k.width + gap && k.x < b.x + b.width + gap && b.y < k.y + k.height + gap && k.y < b.y + b.height + gap,
      );
      if (clash) link.classList.add("crowded");
      else kept.push(b);
    });
  });
}

let fitting = 0;
function refitMapLabels() {
  cancelAnimationFrame(fitting);
  fitting = requestAnimationFrame(fitMapLabels);
}

document.addEventListener("DOMContentLoaded", () => {
  revealTarget();
  partialForms();
  fitMapLabels();
});
window.addEventListener("hashchange", revealTarget);
window.addEventListener("resize", refitMapLabels);
