// Accessibility repairs of the theme's and Sphinx's markup (found by the axe-core audit,
// tests/test_pages.py):
// * a button or link whose aria-label does not contain its visible text (the theme's search
//   button: label "Search", text "Search Ctrl+K") is named by its text instead, so that a
//   speech-input user can say what they see (label-content-name-mismatch); a collapsible
//   block's summary ("Show code cell source", "Hide code cell source" once open) loses its
//   fixed label instead, so that its name follows what it shows;
// * Sphinx's citation list has role="list" but its entries have role="doc-biblioentry",
//   which axe-core does not accept as list items (aria-required-children): they become
//   "listitem";
// * the theme's primary sidebar, a plain div, becomes a complementary landmark, so that the
//   book's title and the search button above its table of contents are in a landmark;
// * the theme's colour-mode button is labelled "Color mode" but FontAwesome turns its icons'
//   titles ("Light", "Dark", "System Settings") into SVG titles that name its content, which
//   the label does not contain: the icons lose their titles and are hidden from assistive
//   technology (the button keeps its label "Color mode" and its tooltip). FontAwesome replaces the icons after this script has run, so the repair is
//   made again whenever the button's content changes.
(function () {
  function quietIcons(button) {
    button.querySelectorAll(".theme-switch, svg").forEach(function (icon) {
      if (icon.getAttribute("aria-hidden") !== "true") icon.setAttribute("aria-hidden", "true");
      if (icon.hasAttribute("aria-labelledby")) icon.removeAttribute("aria-labelledby");
      if (icon.hasAttribute("role")) icon.removeAttribute("role");
      if (icon.hasAttribute("title")) icon.removeAttribute("title");
      icon.querySelectorAll("title").forEach(function (t) { t.remove(); });
    });
  }
  function watchColourMode() {
    document.querySelectorAll(".theme-switch-button").forEach(function (button) {
      quietIcons(button);
      new MutationObserver(function () { quietIcons(button); })
        .observe(button, {childList: true, subtree: true, attributes: true});
    });
  }
  function repair() {
    watchColourMode();
    document.querySelectorAll("button[aria-label], a[aria-label], summary[aria-label]")
      .forEach(function (b) {
        var label = b.getAttribute("aria-label");
        var text = (b.innerText || "").replace(/\s+/g, " ").trim();
        if (!text) {   // an icon button: the names of its visible icons are its text
          text = Array.prototype.map.call(b.querySelectorAll("[aria-labelledby]"), function (i) {
            if (!i.getClientRects().length) return "";
            var t = document.getElementById(i.getAttribute("aria-labelledby"));
            return t ? t.textContent.trim() : "";
          }).filter(Boolean).join(" ");
          if (text && label.toLowerCase().indexOf(text.toLowerCase()) < 0) {
            b.removeAttribute("aria-label");   // named by its visible icons' titles
          }
        } else if (label.toLowerCase().indexOf(text.toLowerCase()) < 0) {
          // a summary's text changes when it opens ("Show ..." / "Hide ..."): no label, so
          // its name is the text it shows; others get the name a speech-input user reads off
          if (b.tagName === "SUMMARY") b.removeAttribute("aria-label");
          else b.setAttribute("aria-label", text);
        }
      });
    document.querySelectorAll('[role="list"].citation-list > *').forEach(
      function (e) { e.setAttribute("role", "listitem"); });
    // the primary sidebar (the book's title, search, the table of contents) is a plain div:
    // its title and search button were in no landmark (axe-core: region)
    var sidebar = document.getElementById("pst-primary-sidebar");
    if (sidebar && !sidebar.hasAttribute("role")) {
      sidebar.setAttribute("role", "complementary");
      sidebar.setAttribute("aria-label", "The book's contents");
    }
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", repair);
  } else {
    repair();
  }
})();

// Inline formulas wider than their box (a phone) scroll instead of being clipped: the class
// lecnotes-wide-math (lecnotes.css) is set on those, once MathJax has typeset the page and
// again when the window changes size.
(function () {
  function mark() {
    document.querySelectorAll("span.math").forEach(function (e) {
      // the typeset formula's width (scrollWidth also counts MathJax's hidden speech markup)
      var m = e.querySelector("mjx-container");
      var width = m ? m.getBoundingClientRect().width : e.scrollWidth;
      e.classList.toggle("lecnotes-wide-math", width > e.clientWidth + 4);
    });
  }
  function whenTypeset() {
    if (window.MathJax && MathJax.startup && MathJax.startup.promise) {
      MathJax.startup.promise.then(mark);
    } else {
      mark();
    }
  }
  window.addEventListener("resize", mark);
  if (document.readyState === "complete") {
    whenTypeset();
  } else {
    window.addEventListener("load", whenTypeset);
  }
})();

// Open the folded block (a <details>: a chapter's table in the claims ledger, a cell's claims)
// that holds the element a link points at, then scroll to it. Added to every page by
// book/_ext/claims_ledger.py.
(function () {
  function reveal() {
    var id = decodeURIComponent(window.location.hash.slice(1));
    var target = id && document.getElementById(id);
    if (!target) return;
    var opened = false;
    for (var d = target.closest("details"); d; d = d.parentElement.closest("details")) {
      if (!d.open) { d.open = true; opened = true; }
    }
    if (opened) target.scrollIntoView();
  }
  window.addEventListener("hashchange", reveal);
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", reveal);
  } else {
    reveal();
  }
})();
