// Small progressive enhancements; every page works without this file.
(function () {
  "use strict";
  // Move focus to content htmx swapped in when it asks for it (data-focus), so
  // keyboard and screen-reader users land on the feedback they just caused.
  document.addEventListener("htmx:afterSettle", function (event) {
    var swapped = event.detail.elt;
    if (!swapped || !swapped.querySelector) {
      return;
    }
    var target = swapped.matches("[data-focus]") ? swapped : swapped.querySelector("[data-focus]");
    if (target && !target.contains(document.activeElement)) {
      target.focus({ preventScroll: false });
      target.removeAttribute("data-focus");
      return;
    }
    // Focus was on something the swap removed (e.g. "Back" on step 1): keep it in the swapped region.
    if (document.activeElement === document.body) {
      var heading = swapped.querySelector("[tabindex='-1']");
      if (heading) {
        heading.focus({ preventScroll: true });
      }
    }
  });
  // A notice the page opens on (the site's messages, such as "You are logged out"; a walkthrough step asked for too
  // early, or one it lacks) takes focus, the first of them, so a screen reader says it (a role="status" already
  // there on load is not announced).
  // On "load": the browser's move to the address's #fragment comes after this script and would take focus back.
  window.addEventListener("load", function () {
    var notice = document.querySelector("[data-focus-on-load]");
    if (notice) {
      notice.focus({ preventScroll: false });
    }
  });
  // An interview's clock (data-countdown: seconds left when the server rendered it) counts down each second;
  // the server's poll swaps in a fresh one every few seconds, which corrects any drift and says "Time is up".
  function tickClocks() {
    document.querySelectorAll("[data-countdown]").forEach(function (clock) {
      if (!clock.dataset.countdownEnd) {
        clock.dataset.countdownEnd = String(Date.now() + 1000 * Number(clock.dataset.countdown));
        var note = clock.parentNode.querySelector("[data-countdown-note]");
        if (note) {
          note.textContent = "(minutes:seconds)";
        }
      }
      var left = Math.max(0, Math.ceil((Number(clock.dataset.countdownEnd) - Date.now()) / 1000));
      clock.textContent = Math.floor(left / 60) + ":" + String(left % 60).padStart(2, "0");
    });
  }
  tickClocks();
  setInterval(tickClocks, 1000);
  // A copy button (data-copy: the id of the field it copies) is shown only where it can work.
  document.querySelectorAll("[data-copy]").forEach(function (button) {
    if (!navigator.clipboard) {
      return;
    }
    button.hidden = false;
    button.addEventListener("click", function () {
      var field = document.getElementById(button.dataset.copy);
      var announcer = document.getElementById("announcer");
      navigator.clipboard.writeText(field.value).then(function () {
        button.textContent = "Copied";
        if (announcer) {
          announcer.textContent = "Copied to the clipboard.";
        }
      }, function () {
        field.select(); // the clipboard refused: the key is selected for the keyboard's copy
        if (announcer) {
          announcer.textContent = "Could not copy: the key is selected, press Ctrl+C (or Cmd+C).";
        }
      });
    });
  });
  // While a request runs, its target says so (aria-busy); the swap or the end of the request clears it.
  document.addEventListener("htmx:beforeRequest", function (event) {
    if (event.detail.target) {
      event.detail.target.setAttribute("aria-busy", "true");
    }
  });
  document.addEventListener("htmx:afterRequest", function (event) {
    if (event.detail.target) {
      event.detail.target.removeAttribute("aria-busy");
    }
  });
  // A request that failed (rate limit, expired session, server error) is said, not silently dropped.
  document.addEventListener("htmx:responseError", function (event) {
    var status = event.detail.xhr ? event.detail.xhr.status : 0;
    var announcer = document.getElementById("announcer");
    var message = status === 429
      ? "Too many requests: wait a few seconds and try again. Nothing you saved was lost."
      : status === 403
        ? "Your session changed (for example you logged in elsewhere): reload the page and try again."
        : status === 404 // e.g. Next to a step removed since the page was loaded
          ? "That is not here any more (error 404): it may have changed since this page was loaded. Reload the page; your saved answers are safe."
          : "That did not work (error " + status + "). Reload the page and try again; your saved answers are safe.";
    if (announcer) {
      announcer.textContent = message;
    }
    var box = document.getElementById("request-error");
    if (box) {
      box.textContent = message;
      box.hidden = false;
    }
  });
  document.addEventListener("htmx:sendError", function () {
    var box = document.getElementById("request-error");
    if (box) {
      box.textContent = "The server could not be reached. Check your connection and try again.";
      box.hidden = false;
    }
  });
  // A scroll region (data-scroll-region) comes with tabindex="0" so the keyboard can scroll it; one whose
  // content fits has nothing to scroll, so it is a tab stop only while it overflows (1 px allowed for rounding).
  function updateScrollStop(region) {
    var overflows = region.scrollWidth > region.clientWidth + 1 || region.scrollHeight > region.clientHeight + 1;
    if (overflows) {
      region.setAttribute("tabindex", "0");
    } else if (region !== document.activeElement) { // never pull focus out from under the user
      region.removeAttribute("tabindex");
    }
  }
  // The observer re-checks a region when it is resized (window width, a <details> opened), and once on observe.
  var resizes = new ResizeObserver(function (entries) {
    entries.forEach(function (entry) { updateScrollStop(entry.target); });
  });
  function updateScrollStops() {
    document.querySelectorAll("[data-scroll-region]").forEach(function (region) {
      updateScrollStop(region);
      resizes.observe(region); // a no-op for a region already observed
    });
  }
  updateScrollStops(); // the script is deferred: the page is parsed
  window.addEventListener("load", updateScrollStops); // fonts and images may change what fits
  document.addEventListener("htmx:afterSettle", updateScrollStops); // swapped fragments bring regions
  document.addEventListener("focusout", function (event) { // kept while focused: checked again on leaving
    if (event.target.matches && event.target.matches("[data-scroll-region]")) {
      updateScrollStop(event.target);
    }
  });
  document.addEventListener("htmx:beforeCleanupElement", function (event) { // a region swapped out is let go
    if (event.target.matches && event.target.matches("[data-scroll-region]")) {
      resizes.unobserve(event.target);
    }
  });
  // A walkthrough's diagram wider than its region (on a phone) opened at its left edge, where the part the step
  // added (drawn dashed, class "new") was often out of sight. The region now scrolls sideways to it: to all
  // the new boxes when they fit the region together, else to the first of them (a step that adds only
  // connections: to those). Only the region scrolls: the page stays put and focus stays where it is. A step
  // whose every box is new (the first) has no part to single out and opens at the left edge as before; so does
  // a step whose new part is already in view. Smooth after Next or Back, unless the learner asked for reduced
  // motion; at once when the page loads.
  var reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
  function showNewPart(region, smooth) {
    if (region.scrollWidth <= region.clientWidth + 1 || !region.querySelector(".box:not(.new)")) {
      return;
    }
    var parts = region.querySelectorAll(".box.new");
    if (!parts.length) {
      parts = region.querySelectorAll(".edge.new");
    }
    if (!parts.length) {
      return;
    }
    var origin = region.getBoundingClientRect().left + region.clientLeft - region.scrollLeft;
    var spans = Array.prototype.map.call(parts, function (part) {
      var box = part.getBoundingClientRect();
      return { left: box.left - origin, right: box.right - origin };
    });
    var span = spans.reduce(function (all, one) {
      return { left: Math.min(all.left, one.left), right: Math.max(all.right, one.right) };
    });
    if (span.right - span.left > region.clientWidth) {
      span = spans[0];
    }
    if (span.left >= region.scrollLeft && span.right <= region.scrollLeft + region.clientWidth) {
      return; // already in view
    }
    var left = span.right - span.left > region.clientWidth
      ? span.left // wider than the region itself: its start in view
      : (span.left + span.right - region.clientWidth) / 2; // centred, with what it connects to either side
    left = Math.max(0, Math.min(left, region.scrollWidth - region.clientWidth));
    region.scrollTo({ left: left, behavior: smooth && !reducedMotion.matches ? "smooth" : "auto" });
  }
  function showNewParts(root, smooth) {
    var regions = root.matches && root.matches(".diagram [data-scroll-region]")
      ? [root]
      : root.querySelectorAll(".diagram [data-scroll-region]");
    Array.prototype.forEach.call(regions, function (region) {
      showNewPart(region, smooth);
    });
  }
  showNewParts(document, false); // the script is deferred: the page is parsed and styled
  document.addEventListener("htmx:load", function (event) { // a step swapped in by Next or Back
    if (event.detail.elt && event.detail.elt !== document.body && event.detail.elt.querySelectorAll) {
      showNewParts(event.detail.elt, true);
    }
  });
  // Confirm before destructive actions marked with data-confirm.
  document.addEventListener("submit", function (event) {
    var form = event.target;
    var message = form.getAttribute && form.getAttribute("data-confirm");
    if (message && !window.confirm(message)) {
      event.preventDefault();
    }
  });
})();
