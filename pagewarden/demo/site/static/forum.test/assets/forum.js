// forum.test: voting without a page load, and the cookie notice.
document.addEventListener("click", async (event) => {
  const vote = event.target.closest("button.vote");
  if (vote) {
    const response = await fetch(location.pathname.replace(/\/$/, "") + "/vote", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: "post=" + encodeURIComponent(vote.dataset.post),
    });
    const data = await response.json();
    vote.setAttribute("aria-pressed", String(data.voted));
    vote.closest(".votes").querySelector(".score").textContent = data.score;
    return;
  }
  const dismiss = event.target.closest("[data-dismiss-cookies]");
  if (dismiss) {
    await fetch("/cookies/dismiss", { method: "POST" });
    dismiss.closest(".cookie-banner").hidden = true;
  }
});
