window.recordedScript = "ran";
