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
