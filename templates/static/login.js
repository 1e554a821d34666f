// Sign in from a link's fragment (#token=...): the fragment is never sent to the server, so the
// token stays out of access logs and proxies. No dependencies.
(function () {
  "use strict";
  var params = new URLSearchParams(window.location.hash.slice(1));
  var token = params.get("token");
  if (!token) return;
  history.replaceState(null, "", window.location.pathname + window.location.search);
  document.getElementById("token").value = token;
  document.getElementById("login").submit();
})();
