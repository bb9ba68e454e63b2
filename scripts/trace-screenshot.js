// Added to speedscope's page by scripts/trace-screenshot.sh, before speedscope's own script.
// speedscope reports a file it cannot read with alert(), which hangs a headless browser: the
// message goes to the title instead, where the script looks for it. speedscope picks a track
// with the keys n / p only: with window.gpubtTrack set, press n until the toolbar names it.
window.alert = function (message) { document.title = "gpubt: error: " + message; };
(function () {
  var presses = 0;
  function step() {
    var text = document.body ? document.body.innerText : "";
    if (!/Time Order/.test(text)) { setTimeout(step, 200); return; } // not loaded yet
    if (text.indexOf(window.gpubtTrack) >= 0) return;
    var m = text.match(/\((\d+)\/(\d+)\)/); // "(2/5)": track 2 of 5; absent with one track
    if (presses++ >= (m ? Number(m[2]) : 1)) {
      document.title = "gpubt: error: no track named like " + window.gpubtTrack;
      return;
    }
    window.dispatchEvent(new KeyboardEvent("keypress", {key: "n", bubbles: true}));
    setTimeout(step, 100);
  }
  if (window.gpubtTrack) setTimeout(step, 500);
})();
