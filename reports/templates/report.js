(function () {
  "use strict";
  var form = document.getElementById("filters");
  if (!form) { return; }
  var findings = Array.prototype.slice.call(document.querySelectorAll("article.finding"));
  var files = Array.prototype.slice.call(document.querySelectorAll("section.file"));
  var status = document.getElementById("filter-status");
  var noMatch = document.getElementById("no-match");
  var fields = {
    severity: document.getElementById("filter-severity"),
    rule: document.getElementById("filter-rule"),
    file: document.getElementById("filter-file"),
    text: document.getElementById("filter-text")
  };

  function apply() {
    var severity = fields.severity.value;
    var rule = fields.rule.value;
    var file = fields.file.value;
    var words = fields.text.value.toLowerCase().split(/\s+/).filter(Boolean);
    var shown = 0;
    findings.forEach(function (article) {
      var data = article.dataset;
      var visible = (!severity || data.severity === severity) &&
        (!rule || data.rule === rule) &&
        (!file || data.file === file) &&
        words.every(function (word) { return data.search.indexOf(word) !== -1; });
      article.hidden = !visible;
      if (visible) { shown += 1; }
    });
    files.forEach(function (section) {
      var all = section.querySelectorAll("article.finding").length;
      var visible = section.querySelectorAll("article.finding:not([hidden])").length;
      var count = section.querySelector(".count");
      section.hidden = visible === 0;
      if (count) {
        count.textContent = visible === all
          ? all + (all === 1 ? " finding" : " findings")
          : visible + " of " + all + " findings shown";
      }
    });
    var total = findings.length;
    status.textContent = shown === total
      ? total + (total === 1 ? " finding" : " findings")
      : shown + " of " + total + " findings shown";
    noMatch.hidden = shown > 0 || total === 0;
    toHash();
  }

  // The filter state lives in the address, so a filtered view can be reloaded, bookmarked and shared.
  function toHash() {
    var parts = [];
    Object.keys(fields).forEach(function (name) {
      if (fields[name].value) { parts.push(encodeURIComponent(name) + "=" + encodeURIComponent(fields[name].value)); }
    });
    var current = window.location.hash.replace(/^#/, "");
    if (!parts.length && current.indexOf("=") === -1) { return; }  // a plain #anchor: leave it
    var wanted = parts.join("&");
    if (wanted !== current) {
      window.history.replaceState(null, "", wanted ? "#" + wanted : window.location.pathname + window.location.search);
    }
  }

  // Filters can be given in the address: report.html#rule=AD101&severity=error
  function fromHash() {
    var hash = window.location.hash.replace(/^#/, "");
    if (hash.indexOf("=") === -1) { return; }
    hash.split("&").forEach(function (pair) {
      var parts = pair.split("=");
      var field = fields[decodeURIComponent(parts[0])];
      if (field) { field.value = decodeURIComponent(parts[1] || ""); }
    });
  }

  form.hidden = false;
  form.addEventListener("input", apply);
  form.addEventListener("change", apply);
  form.addEventListener("submit", function (event) { event.preventDefault(); });
  form.addEventListener("reset", function () { window.setTimeout(apply, 0); });
  window.addEventListener("hashchange", function () { fromHash(); apply(); });
  fromHash();
  apply();

  // Old and new parameters side by side: a row as tall as its taller side, so rows stay aligned.
  Array.prototype.forEach.call(document.querySelectorAll(".sig-sides"), function (sides) {
    var lists = sides.querySelectorAll(":scope > .sig-side > ol.params");
    if (lists.length !== 2) { return; }
    var left = lists[0].children, right = lists[1].children;
    for (var i = 0; i < Math.min(left.length, right.length); i += 1) {
      var height = Math.max(left[i].offsetHeight, right[i].offsetHeight);
      left[i].style.minHeight = right[i].style.minHeight = height + "px";
    }
  });

  // Copy a finding's suppression comment.
  Array.prototype.forEach.call(document.querySelectorAll("button.copy"), function (button) {
    button.hidden = false;
    button.addEventListener("click", function () {
      var text = button.dataset.copy;
      var done = function () { button.textContent = "Copied"; };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(text).then(done, function () { button.textContent = "Select and copy"; });
      } else {
        button.textContent = "Select and copy";
      }
    });
  });
}());
