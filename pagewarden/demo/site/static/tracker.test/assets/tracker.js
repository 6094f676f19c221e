// tracker.test: dismissing the instance's broadcast message (remembered server-side).
document.addEventListener("click", async (event) => {
  const button = event.target.closest("[data-dismiss-broadcast]");
  if (!button) return;
  const banner = button.closest(".broadcast");
  const id = button.getAttribute("data-dismiss-broadcast");
  await fetch(`/-/broadcast_messages/${id}/dismiss`, { method: "POST" });
  banner.hidden = true;
});
