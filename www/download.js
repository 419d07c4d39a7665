// Saves `data` (text or bytes) as a file named `name` through the browser's download.
export function download(name, data, type = 'application/json') {
  const url = URL.createObjectURL(new Blob([data], { type }));
  const a = Object.assign(document.createElement('a'), { href: url, download: name });
  document.body.appendChild(a);
  a.click();
  a.remove();
  // Revoked a moment later: the download has taken the blob by then.
  setTimeout(() => URL.revokeObjectURL(url), 1000);
}
