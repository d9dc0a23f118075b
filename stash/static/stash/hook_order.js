/* stash, on the hooks list: sortable2 posts each drag to the server, and only logs an answer that
 * is not 200. When the server refuses a drag (it breaks a golden example of a stash that refuses
 * such changes, or the rows were stale), the list is loaded again: it shows the order that holds,
 * and the message that says why.
 */
"use strict";
(function () {
  var config = document.getElementById("admin_sortable2_config");
  if (!config || !window.fetch) {
    return;
  }
  var updateUrl = JSON.parse(config.textContent).update_url;
  var fetch = window.fetch;
  window.fetch = function (resource) {
    var answer = fetch.apply(this, arguments);
    if (String(resource) !== updateUrl) {
      return answer;
    }
    return answer.then(function (response) {
      if (response.status !== 200) {
        window.location.reload();
      }
      return response;
    });
  };
})();
