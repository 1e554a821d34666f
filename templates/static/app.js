// Table filtering (also from ?q= in the URL) and click-to-sort. No dependencies.
(function () {
  "use strict";
  function filterTable(table, query, counter) {
    var q = query.trim().toLowerCase();
    var rows = table.tBodies[0].rows, shown = 0;
    for (var i = 0; i < rows.length; i++) {
      var hit = !q || rows[i].textContent.toLowerCase().indexOf(q) !== -1;
      rows[i].hidden = !hit;
      if (hit) shown++;
    }
    table.setAttribute("data-shown", String(shown));
    if (counter) counter.textContent = shown + " of " + rows.length + " shown";
  }
  function sortBy(table, col, numeric, asc) {
    var body = table.tBodies[0];
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = a.cells[col].textContent.trim(), y = b.cells[col].textContent.trim();
      var r = numeric ? (parseFloat(x) || 0) - (parseFloat(y) || 0) : x.localeCompare(y);
      return asc ? r : -r;
    });
    rows.forEach(function (r) { body.appendChild(r); });
  }
  var input = document.getElementById("filter");
  if (input) {
    var table = document.getElementById(input.getAttribute("data-table"));
    var counter = document.getElementById("shown");
    var initial = new URLSearchParams(window.location.search).get("q");
    if (initial) input.value = initial;
    input.addEventListener("input", function () { filterTable(table, input.value, counter); });
    filterTable(table, input.value, counter);
  }
  document.querySelectorAll("table.sortable th").forEach(function (th, col) {
    th.addEventListener("click", function () {
      var asc = th.getAttribute("aria-sort") !== "ascending";
      th.parentNode.querySelectorAll("th").forEach(function (o) { o.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", asc ? "ascending" : "descending");
      sortBy(th.closest("table"), col, th.getAttribute("data-type") === "num", asc);
    });
  });
})();
