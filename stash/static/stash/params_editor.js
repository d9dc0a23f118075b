/* Params editor: switching between the form made from the hook's schema and raw JSON keeps what was typed. */
'use strict';
{
    const SAVE_FIRST = 'Save to edit the params of this hook in a form.';

    const isBlank = (value) => value === '' || value === null || value === undefined ||
        (Array.isArray(value) && !value.length) ||
        (typeof value === 'object' && !Array.isArray(value) && !Object.keys(value).length);

    // As the server reads the form (admin_params.filled_in): blank list items and blank params left out.
    const filledIn = (data) => Object.fromEntries(Object.entries(data || {})
        .map(([key, value]) => [key, Array.isArray(value) ? value.filter((item) => !isBlank(item)) : value])
        .filter(([, value]) => !isBlank(value)));

    function parts(editor) {
        const formData = editor.querySelector('.stash-params-form textarea[data-django-jsonform]');
        return {
            toggle: editor.querySelector('input.stash-params-raw-toggle'),
            note: editor.querySelector('.stash-params-note'),
            raw: editor.querySelector('.stash-params-raw textarea'),
            formData,
            form: formData && window.reactJsonForm ? window.reactJsonForm.getFormInstance(formData.id + '_jsonform') : null,
        };
    }

    function parseObject(text) {
        try {
            const value = JSON.parse(text.trim() || '{}');
            return value && typeof value === 'object' && !Array.isArray(value) ? value : null;
        } catch (error) {
            return null;
        }
    }

    function toRaw(editor) {
        const {raw, formData} = parts(editor);
        const data = formData ? parseObject(formData.value || '{}') : null;
        if (data) raw.value = JSON.stringify(filledIn(data), null, 2);
    }

    // The form is made for the hook saved; another one picked is edited as raw JSON until saved.
    function otherHookPicked(editor, raw) {
        const select = document.getElementById(raw.id.replace(/params$/, 'hook'));
        return Boolean(select) && select.value !== editor.dataset.hook;
    }

    function toForm(editor) {
        const {toggle, note, raw, form} = parts(editor);
        const data = parseObject(raw.value);
        let problem = '';
        if (otherHookPicked(editor, raw)) problem = SAVE_FIRST;
        else if (!data) problem = 'Fix the JSON first: it must be one JSON object.';
        else if (!form) problem = 'The form could not be shown.';
        note.textContent = problem;
        if (problem) toggle.checked = true;
        else form.update({data: complete(data, schemaOf(editor))});
    }

    function schemaOf(editor) {
        const {formData} = parts(editor);
        return JSON.parse(formData.dataset.djangoJsonform).schema;
    }

    // The form expects a value for each of its inputs (it fills them in only when it starts): what
    // the raw JSON leaves out gets its default, or stays blank (and is left out again when saved).
    function complete(data, schema) {
        const blank = {array: [], boolean: false};
        const filled = {...data};
        Object.entries(schema.keys || schema.properties || {}).forEach(([key, spec]) => {
            if (!(key in filled)) filled[key] = 'default' in spec ? spec.default : (blank[spec.type] ?? '');
        });
        return filled;
    }

    // The generated form's labels stand beside its inputs, not tied to them: name each input after
    // its place in the params ("max_bytes", "words 2"), which its name attribute spells: rjf§words§1.
    // The form draws its inputs after the page has loaded, and again on every change.
    function nameInputs() {
        document.querySelectorAll('.stash-params-form :is(input, select, textarea):not([type=hidden]):not([aria-label])')
            .forEach((input) => {
                if ((input.labels && input.labels.length) || !input.name.startsWith('rjf')) return;
                const place = input.name.split('\u00a7').slice(1)
                    .map((part) => (/^\d+$/.test(part) ? String(Number(part) + 1) : part));
                input.setAttribute('aria-label', place.join(' ') || 'params');
            });
    }
    new MutationObserver(nameInputs).observe(document.documentElement, {childList: true, subtree: true});

    document.addEventListener('change', (event) => {
        const target = event.target;
        if (target instanceof HTMLInputElement && target.classList.contains('stash-params-raw-toggle')) {
            const editor = target.closest('.stash-params-editor');
            if (target.checked) toRaw(editor); else toForm(editor);
        }
    });

    // Another hook picked: switch to raw JSON, capturing the event so that this runs before the
    // hook picker fills in the new hook's defaults (it reads the raw JSON).
    document.addEventListener('change', (event) => {
        const select = event.target;
        if (!(select instanceof HTMLSelectElement) || !select.hasAttribute('data-hook-picker')) return;
        const raw = document.getElementById(select.id.replace(/hook$/, 'params'));
        const editor = raw && raw.closest('.stash-params-editor');
        const {toggle, note} = editor ? parts(editor) : {};
        if (!toggle) return;
        if (select.value !== editor.dataset.hook) {
            if (!toggle.checked) toRaw(editor);
            toggle.checked = true;
            note.textContent = SAVE_FIRST;
        } else {
            note.textContent = '';
        }
    }, true);
}
