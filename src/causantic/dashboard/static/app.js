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

// The skip link: the next Tab goes on from the page, not from the top again (followed as a link,
// Chromium scrolls to #main but leaves the focus on the body).
function skipLink() {
  const link = document.querySelector("a.skip");
  const main = document.getElementById("main");
  if (!link || !main) return;
  link.addEventListener("click", (event) => {
    event.preventDefault();
    main.focus();
  });
}

document.addEventListener("DOMContentLoaded", () => {
  revealTarget();
  partialForms();
  skipLink();
});
window.addEventListener("hashchange", revealTarget);
