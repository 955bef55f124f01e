/* Local stand-in for MTurk's crowd-html-elements, used only by `contrastgen mturk preview`.
 *
 * Why it exists: the real library is loaded from assets.crowd.aws, which an offline preview must
 * not fetch. This renders <crowd-input> and <crowd-checkbox> as native widgets and makes
 * <crowd-form> run the layout's own onsubmit check and then show the answers in the shape
 * crowd-form submits them (a one-element JSON list mapping field name to value; a checkbox gives
 * {"on": true|false}) together with the Answer.* columns of the batch results CSV, instead of
 * posting them anywhere. Elements are defined after parsing so that they upgrade with their
 * children in place.
 */
(function () {
  'use strict';

  class CrowdInput extends HTMLElement {
    connectedCallback() {
      if (this._input) { return; }
      const label = document.createElement('label');
      label.textContent = (this.getAttribute('label') || '') + ' ';
      const input = document.createElement('input');
      input.type = 'text';
      if (this.getAttribute('max-length')) { input.maxLength = Number(this.getAttribute('max-length')); }
      label.appendChild(input);
      this.appendChild(label);
      this._input = input;
    }
    get value() { return this._input ? this._input.value : ''; }
    set value(v) { this.connectedCallback(); this._input.value = v; }
  }

  class CrowdCheckbox extends HTMLElement {
    connectedCallback() {
      if (this._box) { return; }
      const label = document.createElement('label');
      const box = document.createElement('input');
      box.type = 'checkbox';
      while (this.firstChild) { label.appendChild(this.firstChild); }
      label.insertBefore(box, label.firstChild);
      this.appendChild(label);
      this._box = box;
    }
    get checked() { return this._box ? this._box.checked : false; }
    set checked(v) { this.connectedCallback(); this._box.checked = Boolean(v); }
  }

  function collect(form) {
    var answers = {};
    var fields = form.querySelectorAll('[name]');
    for (var i = 0; i < fields.length; i++) {
      var el = fields[i];
      var name = el.getAttribute('name');
      var tag = el.tagName.toLowerCase();
      if (tag === 'crowd-input') {
        answers[name] = el.value;
      } else if (tag === 'crowd-checkbox') {
        answers[name] = answers[name] || {};
        answers[name][el.getAttribute('value') || 'on'] = el.checked;
      } else if (tag === 'input' || tag === 'textarea' || tag === 'select') {
        if ((el.type === 'checkbox' || el.type === 'radio') && !el.checked) { continue; }
        answers[name] = el.value;
      }
    }
    return answers;
  }

  function flatten(answers) {
    var columns = {};
    Object.keys(answers).sort().forEach(function (name) {
      var v = answers[name];
      if (v !== null && typeof v === 'object') {
        Object.keys(v).sort().forEach(function (k) { columns['Answer.' + name + '.' + k] = String(v[k]); });
      } else {
        columns['Answer.' + name] = String(v);
      }
    });
    return columns;
  }

  class CrowdForm extends HTMLElement {
    connectedCallback() {
      if (this._button) { return; }
      const button = document.createElement('button');
      button.type = 'button';
      button.id = 'cg-submit';
      button.textContent = 'Submit';
      button.addEventListener('click', () => this.submit());
      this.appendChild(button);
      this._button = button;
    }
    submit() {
      if (!this.dispatchEvent(new Event('submit', { cancelable: true }))) { return false; }
      const answers = collect(this);
      let out = document.getElementById('cg-submitted');
      if (!out) {
        out = document.createElement('pre');
        out.id = 'cg-submitted';
        document.body.appendChild(out);
      }
      out.textContent = JSON.stringify({ taskAnswers: [answers], columns: flatten(answers) }, null, 2);
      return true;
    }
  }

  document.addEventListener('DOMContentLoaded', function () {
    customElements.define('crowd-input', CrowdInput);
    customElements.define('crowd-checkbox', CrowdCheckbox);
    customElements.define('crowd-form', CrowdForm);
  });
})();
